// core.templating.TemplatedTask: renders `spec` (the YAML of another runnable task), parses it and runs that
// task with the same context; its result is the TemplatedTask's result.
import { definePlugin, p, PLUGIN_PREFIX } from './define.js';
import { withTask } from './util.js';

export const TEMPLATED_TYPE = PLUGIN_PREFIX + 'core.templating.TemplatedTask';

export const templatedDefinition = definePlugin({
  type: 'core.templating.TemplatedTask',
  title: 'Templated task',
  description: 'Renders `spec`, the YAML of another runnable task, and runs that task in its place (its id defaults to the TemplatedTask\'s). The spec is validated as a task declared in a flow; the engine\'s properties (retry, timeout, runIf...) belong on the TemplatedTask itself.',
  properties: { spec: p.string().required().describe('The YAML of the task to run (expressions allowed).') },
  examples: [{ title: 'Choose the task type at run time', code: 'id: tpl\ntype: ai.service.plugin.core.templating.TemplatedTask\nspec: |\n  type: ai.service.plugin.core.log.Log\n  message: "{{ inputs.message }}"\n' }],
  async run(ctx, props) {
    // The model (validation) and the registry (the target) are loaded here: the catalog listing this module may not import them.
    const [{ parseSpec, validSpec }, { getRunnable }] = await Promise.all([import('./templated-spec.js'), import('./index.js')]);
    if (props.spec === '') throw new Error("Missing required property 'spec'");
    const task = parseSpec(props.spec, ctx.task.id);
    const target = getRunnable(task.type);
    if (!target) {
      throw new Error(`The templated task type '${task.type}' is not a runnable task`);
    }
    if (target.type === TEMPLATED_TYPE) {
      throw new Error('The templated task cannot be of type TemplatedTask');
    }
    return target.run(withTask(ctx, validSpec(task)));
  },
});
