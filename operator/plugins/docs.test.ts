// Tests of the generated plugin reference: docs/plugins.md holds exactly what `npm run docs:plugins` produces from the
// built-in definitions, and a definition's title, properties, defaults, outputs and example appear in it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BUILTIN_DEFINITIONS } from './catalog.js';
import { definePlugin, p } from './define.js';
import { BEGIN_MARK, END_MARK, pluginReference, withReference } from './docs.js';
import { TRIGGER_DEFINITIONS } from '../model/schema-triggers.js';

describe('plugin reference (docs/plugins.md)', () => {
  it('is current: run `npm run docs:plugins` after changing a definition', () => {
    const text = readFileSync(new URL('../../docs/plugins.md', import.meta.url), 'utf8');
    expect(withReference(text, pluginReference(BUILTIN_DEFINITIONS, TRIGGER_DEFINITIONS))).toBe(text);
    // Every built-in task type and trigger type is documented.
    for (const d of [...BUILTIN_DEFINITIONS, ...TRIGGER_DEFINITIONS]) expect(text).toContain(`Type \`${d.type}\``);
  });

  it('documents a definition: properties with type, required, default and description; outputs; example', () => {
    const def = definePlugin({
      type: 'doc.Sample', aliases: ['io.kestra.plugin.old.Sample'], title: 'Sample', description: 'Does a | thing.',
      properties: {
        url: p.string().required().describe('Where | to send.'),
        count: p.integer({ min: 1 }).default(3),
        token: p.string().secret(),
      },
      outputs: { code: { type: 'integer', description: 'The status.' } },
      examples: [{ title: 'Send', code: 'id: s\ntype: doc.Sample\nurl: x\n' }],
      async run() { return { state: 'SUCCESS' }; },
    });
    const md = pluginReference([def]);
    expect(md.startsWith(BEGIN_MARK) && md.endsWith(END_MARK)).toBe(true);
    expect(md).toContain('### Sample (`doc.Sample`)');
    expect(md).toContain('(Kestra: `io.kestra.plugin.doc.Sample`; also `io.kestra.plugin.old.Sample`)');
    expect(md).toContain('| `url` | string | yes |  | Where \\| to send. |');
    expect(md).toContain('| `count` | integer (at least 1) |  | `3` |  |');
    expect(md).toContain('| `token` | string (secret) |');
    expect(md).toContain('| `code` | integer | The status. |');
    expect(md).toContain('```yaml\nid: s\ntype: doc.Sample\nurl: x\n```');
    // The flowables are listed with what they do and the properties their schema accepts.
    expect(md).toMatch(/\| `core\.flow\.Sequential` \| Runs its tasks one after the other\. \| \*\*`tasks`\*\*/);
  });

  it('refuses a file without the generated region', () => {
    expect(() => withReference('# nothing', 'x')).toThrow(/no region/);
  });
});
