// core.execution.Assert: every rendered condition must be true, else the task fails (each failure logged at ERROR).
import { STRING_LIST_OR_EXPR } from '../model/schema-common.js';
import { definePlugin, p } from './define.js';
import { failed, renderStringList } from './util.js';

function isTrue(value: unknown): boolean {
  return value === true || (typeof value === 'string' && value.trim().toLowerCase() === 'true');
}

export const assertDefinition = definePlugin({
  type: 'core.execution.Assert',
  title: 'Assert',
  description: 'Fails the task when any condition does not render to true, logging each failed one (and `errorMessage`) at ERROR.',
  properties: {
    // Kept as written: each condition is rendered on its own and named in the log as written.
    conditions: p.raw(STRING_LIST_OR_EXPR).required().describe('The conditions (expressions), or an expression yielding a list of them.'),
    errorMessage: p.string().describe('Logged at ERROR when an assertion fails.'),
  },
  examples: [{ title: 'Check an output', code: 'id: check\ntype: ai.service.plugin.core.execution.Assert\nconditions:\n  - "{{ outputs.fetch.code == 200 }}"\nerrorMessage: "The fetch failed"\n' }],
  inline: true,
  async run(ctx, props) {
    const raw = props.conditions;
    const conditions = Array.isArray(raw) ? raw : renderStringList(ctx, raw);
    if (conditions.length === 0) throw new Error("Missing required property 'conditions'");
    let failures = 0;
    for (const condition of conditions) {
      const value = typeof condition === 'string' ? ctx.renderTyped(condition) : condition;
      if (isTrue(value)) continue;
      failures++;
      ctx.logger.error(`Assertion \`${String(condition)}\` failed!`);
    }
    if (failures === 0) return { state: 'SUCCESS' };
    if (props.errorMessage) ctx.logger.error(props.errorMessage);
    return failed(`${failures} assertion${failures > 1 ? 's' : ''} failed!`);
  },
});
export const assertPlugin = assertDefinition.runnable;
