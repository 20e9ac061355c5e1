// Recovery of Subflow children (Children.check) over the real SQLite stores behind the masking layer: a parent whose
// run kept the request of a child that was never created (the crash came first) creates it with its inputs in clear,
// even when they hold a secret (the kept request has them sealed, not masked).
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EngineEvent, SubflowRequest } from '../core/engine-types.js';
import type { Execution, TaskRun } from '../core/types.js';
import { parseFlow } from '../model/index.js';
import { SecretLayer } from '../secrets/layer.js';
import { maskedStores, type MaskedStores } from '../secrets/masked-stores.js';
import { MASK } from '../secrets/masker.js';
import { isSealed, SecretBox } from '../secrets/sealed.js';
import { openEmbeddedStores, type EmbeddedStores } from '../store/sqlite/index.js';
import { sampleExecution, tempDir } from '../store/sqlite/test-fixtures.js';
import { NO_GRANTS } from '../tenancy/namespaces.js';
import { Children } from './children.js';

const SECRET = 'db-passw0rd-4711';
const CHILD = 'id: child\nnamespace: company.team\ninputs:\n  - id: password\n    type: STRING\n  - id: plain\n    type: STRING\ntasks:\n  - id: t\n    type: ai.service.plugin.core.log.Log\n    message: x\n';
const PARENT = 'id: parent\nnamespace: company.team\ntasks:\n  - id: sub\n    type: ai.service.plugin.core.flow.Subflow\n    namespace: company.team\n    flowId: child\n';

let tmp: ReturnType<typeof tempDir>;
let raw: EmbeddedStores;

beforeEach(async () => {
  tmp = tempDir('children-');
  raw = openEmbeddedStores(tmp.dir);
  await raw.flows.save(parseFlow(CHILD), CHILD);
  await raw.flows.save(parseFlow(PARENT), PARENT);
});
afterEach(async () => { await raw.close(); tmp.remove(); });

function parentWithKeptRequest(): Execution {
  const request: SubflowRequest = {
    taskRunId: 'sub-run', taskId: 'sub', executionId: 'child-exec', namespace: 'company.team', flowId: 'child',
    inputs: { password: SECRET, plain: 'hello' }, labels: [], wait: true,
  };
  const now = new Date().toISOString();
  const run: TaskRun = {
    id: 'sub-run', executionId: 'parent-exec', namespace: 'company.team', flowId: 'parent', taskId: 'sub', attempts: [],
    state: { current: 'RUNNING', histories: [{ state: 'RUNNING', date: now }], startDate: now },
    flowableState: { requested: true, request },
    subflowExecutionId: 'child-exec',
  };
  return { ...sampleExecution('parent-exec', { flowId: 'parent', state: 'RUNNING' }), taskRunList: [run] };
}

async function recover(stores: MaskedStores<EmbeddedStores>): Promise<{ events: EngineEvent[]; child?: Execution }> {
  const stored = await stores.executions.create(parentWithKeptRequest());
  const events: EngineEvent[] = [];
  const children = new Children(stores, () => new Date(), (_id, e) => events.push(e), NO_GRANTS, async () => parseFlow(PARENT));
  // As a restarted controller does: what is stored is all it has.
  const parent = (await stores.executions.get('parent-exec'))!.execution;
  expect(parent).toEqual(stored.execution);
  await children.check(parent, parent.taskRunList[0]!);
  return { events, child: (await stores.executions.get('child-exec'))?.execution };
}

describe('a child created from the request its parent kept (after a crash)', () => {
  it('gets its inputs in clear, though the stored request never shows the secret', async () => {
    const layer = new SecretLayer({ values: () => [SECRET], box: new SecretBox(randomBytes(32)) });
    const stores = maskedStores(raw, layer);
    const { events, child } = await recover(stores);
    const kept = (await raw.executions.get('parent-exec'))!.execution.taskRunList[0]!.flowableState!.request as SubflowRequest;
    expect(JSON.stringify(kept)).not.toContain(SECRET);
    expect(isSealed(kept.inputs!.password)).toBe(true);
    expect(kept.inputs!.plain).toBe('hello');
    expect(events.map((e) => e.type)).toEqual(['subflow-created']);
    expect(child!.parent?.executionId).toBe('parent-exec');
    // The child's record seals the value too (a known secret in a STRING input); a task reads it in clear.
    expect(JSON.stringify(child)).not.toContain(SECRET);
    expect(layer.openInput(child!, 'password', child!.inputs.password)).toBe(SECRET);
    expect(child!.inputs.plain).toBe('hello');
  });

  it('fails the run, naming why, when the kept request was sealed with another key', async () => {
    const first = maskedStores(raw, new SecretLayer({ values: () => [SECRET], box: new SecretBox(randomBytes(32)) }));
    await first.executions.create(parentWithKeptRequest());
    const other = maskedStores(raw, new SecretLayer({ values: () => [SECRET], box: new SecretBox(randomBytes(32)) }));
    const events: EngineEvent[] = [];
    const children = new Children(other, () => new Date(), (_id, e) => events.push(e), NO_GRANTS, async () => parseFlow(PARENT));
    const parent = (await other.executions.get('parent-exec'))!.execution;
    await children.check(parent, parent.taskRunList[0]!);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'subflow-error', taskRunId: 'sub-run' });
    expect((events[0] as { error: string }).error).toMatch(/cannot be decrypted.*ENCRYPTION_KEY/);
    expect(await raw.executions.get('child-exec')).toBeUndefined();
  });

  it('without a key, the kept inputs are masked (and so is what the child gets)', async () => {
    const stores = maskedStores(raw, new SecretLayer({ values: () => [SECRET] }));
    const { child } = await recover(stores);
    expect(child!.inputs.password).toBe(MASK);
  });
});
