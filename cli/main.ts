// Entry of the flowpilot CLI (bin/flowpilot.mjs loads it): runs the program on the process's arguments and exits with
// its code, except for `server`, which keeps running.
import { basename } from 'node:path';
import { outcome } from './commands/executions.js';
import { runCli } from './program.js';

const name = basename(process.argv[1] ?? 'flowpilot').replace(/\.(mjs|js|ts)$/, '');
const code = await runCli(process.argv.slice(2), name.startsWith('kubectl-') ? 'kubectl flowpilot' : 'flowpilot');
if (!outcome.keepAlive) {
  process.exitCode = code;
  // Streams and sockets still open (a port-forward, an aborted follow) must not hold the process.
  setTimeout(() => process.exit(code), 50).unref();
  process.stdout.write('', () => process.exit(code));
}
