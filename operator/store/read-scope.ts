// How long a store may keep answering from what it learnt about other connections' writes: until the current turn of
// the event loop ends, or a new request begins (`newReadScope`), whichever comes first. A request that follows a write
// its client saw complete (in another process) therefore always sees it; reads within one turn or one request share
// one look. Stores that cache rows they otherwise re-read per call (operator/store/sqlite/db.ts RowCache) use it.
let scope = 0;
let endScheduled = false;

/** The current read scope: reads that return the same number may share what one of them learnt. */
export function readScope(): number {
  if (!endScheduled) {
    endScheduled = true;
    setImmediate(() => { scope++; endScheduled = false; });
  }
  return scope;
}

/** A new request begins: whatever was committed before it must be seen (called by the API for each request). */
export function newReadScope(): void { scope++; }
