// Flows shared by the graph tests (graph.test.ts in the browser, graph-layout.test.ts on the layout alone).

const LOG = 'io.kestra.plugin.core.log.Log';
export const log = (id: string, indent: string) => `${indent}- id: ${id}\n${indent}  type: ${LOG}\n${indent}  message: ${id}\n`;

/** Every way a flow branches: a trigger, Parallel, If, Switch (cases and defaults), errors and finally. */
export const BRANCHY = `id: branchy
namespace: ui.graph
triggers:
  - id: hourly
    type: io.kestra.plugin.core.trigger.Schedule
    cron: "0 * * * *"
tasks:
  - id: par
    type: io.kestra.plugin.core.flow.Parallel
    tasks:
${log('left', '      ')}${log('right', '      ')}  - id: check
    type: io.kestra.plugin.core.flow.If
    condition: "{{ true }}"
    then:
${log('yes', '      ')}    else:
${log('no', '      ')}  - id: pick
    type: io.kestra.plugin.core.flow.Switch
    value: "b"
    cases:
      a:
${log('case_a', '        ')}      b:
${log('case_b', '        ')}    defaults:
${log('other', '        ')}errors:
${log('on_error', '  ')}finally:
${log('cleanup', '  ')}`;

