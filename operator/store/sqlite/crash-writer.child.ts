// Child process for the crash test: writes executions in a loop and reports each committed write on stdout
// ("C <id>" after create, "U <id> <resourceVersion>" after update) until it is killed with SIGKILL.
import { openEmbeddedStores } from './index.js';
import { sampleExecution } from './test-fixtures.js';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: crash-writer.child.ts <dataDir>');
const stores = openEmbeddedStores(dataDir);

for (let i = 0; ; i++) {
  const id = `crash-${process.pid}-${i}`;
  const { execution } = await stores.executions.create(sampleExecution(id, { padding: 3000 }));
  process.stdout.write(`C ${id}\n`);
  execution.state.current = 'RUNNING';
  const { resourceVersion } = await stores.executions.update(execution, 1);
  process.stdout.write(`U ${id} ${resourceVersion}\n`);
  stores.logs.append([{ executionId: id, namespace: 'crash', flowId: 'f', level: 'INFO', timestamp: new Date().toISOString(), message: `line ${i}` }]);
  if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
}
