// core.output.OutputValues: renders the `values` map and exposes it as the `values` output.
import { definePlugin, p } from './define.js';

export const outputValuesDefinition = definePlugin({
  type: 'core.output.OutputValues',
  title: 'Output values',
  description: 'Renders the `values` map (every value may be an expression) and exposes it as the `values` output.',
  properties: { values: p.map().required().describe('The values to output, by name.') },
  outputs: { values: { type: 'object', description: 'The rendered values.' } },
  examples: [{ title: 'Output two values', code: 'id: out\ntype: ai.service.plugin.core.output.OutputValues\nvalues:\n  name: "{{ inputs.name }}"\n  count: 3\n' }],
  inline: true,
  async run(_ctx, props) {
    return { state: 'SUCCESS', outputs: { values: props.values } };
  },
});
export const outputValuesPlugin = outputValuesDefinition.runnable;
