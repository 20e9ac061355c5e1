// Process-wide hardening, imported first by every entry point (and by the test setup): Object.prototype accepts no new
// property, so even a prototype-pollution path this code base failed to close cannot add one (`({}).isAdmin` stays
// undefined everywhere). Existing properties stay writable: freezing breaks libraries that assign `toString` on their
// own prototypes (the "override mistake": moment, whatwg-url, koa's cookies), and `preventExtensions` does not.
Object.preventExtensions(Object.prototype);
