// Child of faults-timeout.test.ts (run with --expose-gc): 5 fetches to a server that never answers, each guarded by
// AbortSignal.any([a long-lived signal, <timeout of 200 ms>]) while gc() runs every 20 ms. Prints how many ended by
// their timeout within 2 s. Arg: `ours` (timeoutSignal) or `native` (AbortSignal.timeout).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timeoutSignal } from './faults.js';

const gc = (globalThis as { gc?: () => void }).gc!;
const server = createServer(() => { /* holds every request */ });
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
const parent = new AbortController();
const timeout = process.argv[2] === 'native' ? (ms: number) => AbortSignal.timeout(ms) : timeoutSignal;
let timedOut = 0;
for (let i = 0; i < 5; i++) {
  const request = fetch(url, { method: 'POST', body: 'x', signal: AbortSignal.any([parent.signal, timeout(200)]) })
    .then(() => 'answered', (e: Error) => e.name);
  const collector = setInterval(gc, 20);
  const end = await Promise.race([request, new Promise((r) => setTimeout(() => r('hung'), 2_000))]);
  clearInterval(collector);
  if (end === 'TimeoutError') timedOut++;
}
console.log(JSON.stringify({ timedOut }));
process.exit(0);
