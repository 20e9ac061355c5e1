// The tenancy rules as tables: which files and KV namespaces an execution may reach, and the ALLOWED_NAMESPACES setting.
import { describe, expect, it } from 'vitest';
import { newExecution } from '../core/execution.js';
import type { Execution, Flow, TaskRun } from '../core/types.js';
import { LocalStorage } from '../storage/local.js';
import { executionOfPath, fileCallerOf, fileReadDenied } from './files.js';
import { namespaceAllowed, namespaceGrantsFromEnv } from './namespaces.js';
import { scopedStorage } from './scoped-storage.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const flow = { id: 'etl', namespace: 'company.team', tasks: [] } as unknown as Flow;

function execution(extra: Partial<Execution> = {}): Execution {
  return { ...newExecution({ id: 'E1', flow, inputs: {}, now: new Date('2026-01-01T00:00:00Z') }), ...extra };
}

const child = { id: 'r1', taskId: 'call', subflowExecutionId: 'C1', flowableState: { request: { namespace: 'other.ns', flowId: 'sub', executionId: 'C1' } } } as unknown as TaskRun;

describe('fileReadDenied', () => {
  const parentExec = execution({ parent: { executionId: 'P1', taskRunId: 't', namespace: 'parent.ns', flowId: 'up' }, taskRunList: [child] });
  const triggered = execution({ trigger: { id: 'on', type: 'ai.service.plugin.core.trigger.Flow', variables: { executionId: 'U1', namespace: 'upstream.ns', flowId: 'src' } } });
  it.each([
    ['its own files', parentExec, 'kestra:///company/team/etl/executions/E1/tasks/t/r/out.csv', true],
    ['its own uploads in the older dotted layout', parentExec, 'kestra:///company.team/etl/executions/E1/inputs/f/a.csv', true],
    ['another flow of its namespace', parentExec, 'kestra:///company/team/other/executions/X9/tasks/t/r/out.csv', true],
    ["its parent's files (Subflow)", parentExec, 'kestra:///parent/ns/up/executions/P1/tasks/t/r/out.csv', true],
    ["its child's files", parentExec, 'kestra:///other/ns/sub/executions/C1/tasks/t/r/out.csv', true],
    ["its triggering execution's files (Flow trigger)", triggered, 'kestra:///upstream/ns/src/executions/U1/tasks/t/r/o.txt', true],
    ['another execution of the parent namespace', parentExec, 'kestra:///parent/ns/up/executions/P2/tasks/t/r/out.csv', false],
    ['another tenant', parentExec, 'kestra:///victim/ns/flow/executions/V1/tasks/t/r/secret.csv', false],
    ['a child namespace', parentExec, 'kestra:///company/team/sub/flow/executions/V1/tasks/t/r/x', false],
    ['a parent namespace', parentExec, 'kestra:///company/flow/executions/V1/tasks/t/r/x', false],
    ['a path outside the executions layout', parentExec, 'kestra:///etc/passwd', false],
    ['its namespace folder itself', parentExec, 'kestra:///company/team/etl/executions/E1', false],
    ['a traversal', parentExec, 'kestra:///company/team/etl/executions/E1/../../../../victim/x', false],
    ['an encoded traversal', parentExec, 'kestra:///company/team/etl/executions/E1/%2e%2e/%2e%2e/x', false],
    ['a namespace file of its namespace', parentExec, 'kestra:///company/team/_files/scripts/a.py', true],
    ['a namespace file whose path holds executions', parentExec, 'kestra:///company/team/_files/x/executions/V1/tasks/t/r/x', true],
    ['a namespace file of another namespace', parentExec, 'kestra:///victim/ns/_files/secret.txt', false],
    ['a namespace file of a parent namespace', parentExec, 'kestra:///company/_files/a.txt', false],
    ['a namespace file of a child namespace', parentExec, 'kestra:///company/team/sub/_files/a.txt', false],
    ['the namespace files folder itself', parentExec, 'kestra:///company/team/_files', false],
    ['a traversal out of its namespace files', parentExec, 'kestra:///company/team/_files/../../../victim/ns/_files/x', false],
    ['another scheme', parentExec, 'file:///etc/passwd', false],
    ['a plain path', parentExec, '/etc/passwd', false],
  ])('%s: allowed=%s', (_what, exec, uri, allowed) => {
    const denied = fileReadDenied(fileCallerOf(exec), uri);
    expect(denied === undefined).toBe(allowed);
    if (!allowed) expect(denied).toContain(uri);
  });

  it('reads the files it was given as FILE inputs, and only those', () => {
    const withInputs = { ...flow, inputs: [{ id: 'f', type: 'FILE' }, { id: 's', type: 'STRING' }] } as Flow;
    const given = 'kestra:///grand/ns/top/executions/G1/inputs/f/data.csv';
    const smuggled = 'kestra:///victim/ns/f/executions/V1/tasks/t/r/x';
    const exec = execution({ inputs: { f: given, s: smuggled } });
    expect(fileReadDenied(fileCallerOf(exec, withInputs), given)).toBeUndefined();
    expect(fileReadDenied(fileCallerOf(exec, withInputs), smuggled)).toContain('is not allowed');
    expect(fileReadDenied(fileCallerOf(exec, withInputs), 'kestra:///grand/ns/top/executions/G1/inputs/f/other.csv')).toContain('is not allowed');
    expect(fileReadDenied(fileCallerOf(exec), given)).toContain('is not allowed');
  });

  it('grants the namespace files of another namespace through ALLOWED_NAMESPACES', () => {
    const grants = namespaceGrantsFromEnv({ ALLOWED_NAMESPACES: '{"shared.ns": ["company.*"]}' });
    expect(fileReadDenied(fileCallerOf(execution()), 'kestra:///shared/ns/_files/lib.py', grants)).toBeUndefined();
    expect(fileReadDenied(fileCallerOf(execution()), 'kestra:///victim/ns/_files/lib.py', grants)).toContain("namespace file of namespace 'victim.ns'");
  });

  it('grants another namespace through ALLOWED_NAMESPACES', () => {
    const grants = namespaceGrantsFromEnv({ ALLOWED_NAMESPACES: '{"victim.ns": ["company.*"]}' });
    expect(fileReadDenied(fileCallerOf(execution()), 'kestra:///victim/ns/flow/executions/V1/tasks/t/r/x', grants)).toBeUndefined();
  });

  it('names the owning namespace and the setting', () => {
    expect(fileReadDenied(fileCallerOf(execution()), 'kestra:///victim/ns/flow/executions/V1/tasks/t/r/x')).toBe(
      "Reading 'kestra:///victim/ns/flow/executions/V1/tasks/t/r/x' is not allowed: an execution reads only its own files, " +
      "its FILE inputs, those of its parent and child executions, and execution files of its namespace 'company.team' (this file belongs to " +
      "namespace 'victim.ns'; ALLOWED_NAMESPACES can grant it)");
  });

  it('locates the namespace, flow and execution of a path', () => {
    expect(executionOfPath(['a', 'b', 'f', 'executions', 'X', 'tasks', 'x'])).toEqual({ namespace: 'a.b', flowId: 'f', id: 'X' });
    expect(executionOfPath(['f', 'executions', 'X', 'file'])).toBeUndefined();
    expect(executionOfPath(['a', 'f', 'executions', 'X'])).toBeUndefined();
  });
});

describe('ALLOWED_NAMESPACES', () => {
  it.each([
    ['', 'a', 'b', false],
    ['{"b": ["a"]}', 'a', 'b', true],
    ['{"b": ["a"]}', 'b', 'a', false],
    ['{"b": ["a"]}', 'a.x', 'b', false],
    ['{"b": ["a.*"]}', 'a.x', 'b', true],
    ['{"b": ["a.*"]}', 'ab', 'b', false],
    ['{"b.*": ["*"]}', 'z', 'b.c', true],
    ['{"b.*": ["*"]}', 'z', 'bc', false],
  ])('%s: %s → %s allowed=%s', (setting, from, target, allowed) => {
    expect(namespaceAllowed(from, target, namespaceGrantsFromEnv({ ALLOWED_NAMESPACES: setting }))).toBe(allowed);
    expect(namespaceAllowed(target, target)).toBe(true);
  });

  it.each(['[1]', 'nope', '{"a": "b"}', '{"a": ["B C"]}', '{"../x": ["a"]}'])('refuses %s naming the setting', (value) => {
    expect(() => namespaceGrantsFromEnv({ ALLOWED_NAMESPACES: value })).toThrow('ALLOWED_NAMESPACES');
  });
});

describe('scopedStorage', () => {
  it('writes only inside its execution folder and reads by the rules', async () => {
    const storage = new LocalStorage(mkdtempSync(join(tmpdir(), 'scoped-')));
    const view = scopedStorage(storage, fileCallerOf(execution()), namespaceGrantsFromEnv({}));
    const mine = await view.put('company/team/etl/executions/E1/tasks/t/r/a.txt', Buffer.from('a'));
    expect((await view.get(mine)).toString()).toBe('a');
    await expect(view.put('company/team/etl/executions/E2/tasks/t/r/a.txt', Buffer.from('x'))).rejects.toThrow('Writing');
    await expect(view.put('victim/ns/f/executions/V/tasks/t/r/a.txt', Buffer.from('x'))).rejects.toThrow('Writing');
    const theirs = await storage.put('victim/ns/f/executions/V/tasks/t/r/a.txt', Buffer.from('theirs'));
    await expect(view.get(theirs)).rejects.toThrow('is not allowed');
    expect(() => view.getSync(theirs)).toThrow('is not allowed');
    await expect(view.exists(theirs)).rejects.toThrow('is not allowed');
    await expect(view.delete(theirs)).rejects.toThrow('Writing');
    expect((await storage.get(theirs)).toString()).toBe('theirs');
  });
});
