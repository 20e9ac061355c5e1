// Tests of task tree traversal: nested task lists of each flowable type and depth-first listing of a flow.
import { describe, expect, it } from 'vitest';
import type { Task } from '../core/types.js';
import { parseFlow } from './flow.js';
import { allTasks, childTaskLists, locateAllTasks } from './traverse.js';

const P = 'ai.service.plugin.';
const leaf = (id: string): Task => ({ id, type: `${P}core.log.Log`, message: id });

describe('childTaskLists', () => {
  it.each<[string, Task, [string, string[]][]]>([
    ['Sequential', { id: 's', type: `${P}core.flow.Sequential`, tasks: [leaf('a')], errors: [leaf('e')], finally: [leaf('f')] },
      [['tasks', ['a']], ['errors', ['e']], ['finally', ['f']]]],
    ['Parallel', { id: 'p', type: `${P}core.flow.Parallel`, tasks: [leaf('a'), leaf('b')] }, [['tasks', ['a', 'b']]]],
    ['Switch', { id: 's', type: `${P}core.flow.Switch`, value: 'x', cases: { A: [leaf('a')], B: [leaf('b')] }, defaults: [leaf('d')] },
      [['cases.A', ['a']], ['cases.B', ['b']], ['defaults', ['d']]]],
    ['If', { id: 'i', type: `${P}core.flow.If`, condition: 'x', then: [leaf('t')], else: [leaf('e')] }, [['then', ['t']], ['else', ['e']]]],
    ['EachSequential', { id: 'e', type: `${P}core.flow.EachSequential`, value: [], tasks: [leaf('a')] }, [['tasks', ['a']]]],
    ['EachParallel', { id: 'e', type: `${P}core.flow.EachParallel`, value: [], tasks: [leaf('a')] }, [['tasks', ['a']]]],
    ['AllowFailure', { id: 'a', type: `${P}core.flow.AllowFailure`, tasks: [leaf('a')] }, [['tasks', ['a']]]],
    ['WorkingDirectory', { id: 'w', type: `${P}core.flow.WorkingDirectory`, tasks: [leaf('a')] }, [['tasks', ['a']]]],
    ['DAG', { id: 'd', type: `${P}core.flow.DAG`, tasks: [{ task: leaf('a') }, { task: leaf('b'), dependsOn: ['a'] }] }, [['tasks', ['a', 'b']]]],
    ['alias type', { id: 's', type: 'io.kestra.plugin.core.flow.Sequential', tasks: [leaf('a')] }, [['tasks', ['a']]]],
    ['Subflow', { id: 's', type: `${P}core.flow.Subflow`, namespace: 'n', flowId: 'f' }, []],
    ['runnable', leaf('x'), []],
  ])('%s', (_name, task, expected) => {
    expect(childTaskLists(task).map((l) => [l.name, l.tasks.map((t) => t.id)])).toEqual(expected);
  });
});

describe('allTasks', () => {
  const flow = parseFlow(`
id: f
namespace: n
tasks:
  - id: seq
    type: io.kestra.plugin.core.flow.Sequential
    tasks:
      - id: if
        type: io.kestra.plugin.core.flow.If
        condition: "{{ true }}"
        then: [{ id: t1, type: io.kestra.plugin.core.log.Log, message: x }]
        else: [{ id: e1, type: io.kestra.plugin.core.log.Log, message: x }]
    errors: [{ id: seqErr, type: io.kestra.plugin.core.log.Log, message: x }]
  - id: dag
    type: io.kestra.plugin.core.flow.DAG
    tasks:
      - task: { id: d1, type: io.kestra.plugin.core.log.Log, message: x }
errors: [{ id: err, type: io.kestra.plugin.core.log.Log, message: x }]
finally: [{ id: fin, type: io.kestra.plugin.core.log.Log, message: x }]
`);

  it('lists every task depth-first, parents before children, then errors and finally', () => {
    expect(allTasks(flow).map((t) => t.id)).toEqual(['seq', 'if', 't1', 'e1', 'seqErr', 'dag', 'd1', 'err', 'fin']);
  });

  it('knows where each task lives', () => {
    expect(locateAllTasks(flow).map((l) => l.path)).toEqual([
      'tasks[0]', 'tasks[0].tasks[0]', 'tasks[0].tasks[0].then[0]', 'tasks[0].tasks[0].else[0]', 'tasks[0].errors[0]',
      'tasks[1]', 'tasks[1].tasks[0].task', 'errors[0]', 'finally[0]',
    ]);
  });
});
