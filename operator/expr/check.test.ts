// checkTemplate, the save-time check: syntax errors, unknown functions, filters and tests, and invalid literal
// regular expressions are reported; every name the interpreter knows (its own builtins too) is accepted.
import { describe, expect, it } from 'vitest';
import { checkTemplate, RE2_SYNTAX } from './index.js';

describe('checkTemplate', () => {
  it.each([
    ['{{ 1 + }}', 'Invalid expression in `{{ 1 + }}`'],
    ['{% if x %}no end', 'Invalid expression'],
    ['{{ x | nosuchfilter }}', 'unknown filter `nosuchfilter`'],
    ['{{ nosuchfn() }}', 'unknown function `nosuchfn`'],
    ['{{ x is nosuchtest }}', 'unknown test `nosuchtest`'],
    ['{{ x is not nosuchtest(1) }}', 'unknown test `nosuchtest`'],
    ['{% for i in items %}{% if i %}{{ i | upper | nope }}{% endif %}{% endfor %}', 'unknown filter `nope`'],
    ["{{ range.constructor('return process')() }}", 'Only named functions can be called'],
    ['{% macro m() %}x{% endmacro %}', 'Unsupported tag or syntax `macro`'],
    ["{{ s | replace('a(?=b)', 'x', true) }}", `invalid regular expression \`a(?=b)\`: invalid or unsupported Perl syntax: \`(?=\` (${RE2_SYNTAX})`],
    ["{{ s | replace({'(a)\\\\1': 'x'}, regexp=true) }}", 'invalid regular expression `(a)\\1`'],
    ["{{ s | replace(target='[a-', replacement='x', regexp=true) }}", 'invalid regular expression `[a-`: missing closing ]'],
  ])('%s → %s', (template, message) => {
    expect(checkTemplate(template).join(' | ')).toContain(message);
  });

  it.each([
    ['plain text, no template'],
    ["{{ x | default('y') }} {{ x is defined }} {{ x is null }} {{ x is not none }} {{ x is empty }}"],
    ["{{ now() }} {{ render(vars.a) }} {{ 1..3 }} {{ [1, 2] | jq('.[]') | first }} {{ x is even }}"],
    ["{{ s | replace('(a+)+$', 'x', true) }} {{ s | replace('(?=', 'x') }} {{ s | replace(p, 'x', true) }}"],
    ['{% raw %}{{ nosuchfn() | nosuchfilter }}{% endraw %}'],
    ['{# {{ nosuchfn() }} #}'],
    ['{{ undefined.variables.are.only.known.at.run.time }}'],
  ])('%s is fine', (template) => {
    expect(checkTemplate(template)).toEqual([]);
  });

  it('reports each problem once', () => {
    expect(checkTemplate('{{ a | nope }}{{ b | nope }}{{ c | other }}')).toEqual(['unknown filter `nope`', 'unknown filter `other`']);
  });
});
