// core.debug.Return: renders `format` and returns it as the `value` output.
import { definePlugin, p } from './define.js';

export const returnDefinition = definePlugin({
  type: 'core.debug.Return',
  title: 'Return',
  description: 'Renders `format` and returns it as the `value` output (for debugging expressions).',
  properties: { format: p.text().describe('The text to render (expressions allowed).') },
  outputs: { value: { type: 'string', description: 'The rendered `format` (absent when `format` is not set).' } },
  examples: [{ title: 'Return a rendered value', code: 'id: ret\ntype: ai.service.plugin.core.debug.Return\nformat: "{{ taskrun.startDate }}"\n' }],
  inline: true,
  async run(_ctx, props) {
    return { state: 'SUCCESS', outputs: props.format === undefined ? {} : { value: props.format } };
  },
});
export const returnPlugin = returnDefinition.runnable;
