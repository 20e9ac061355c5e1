// Tests run under the same process hardening as every entry point (operator/harden.ts).
import '../operator/harden.js';
