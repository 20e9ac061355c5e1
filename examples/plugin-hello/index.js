// Example flowpilot plugin package: two task types declared with the author API (definePlugin and the property
// builders of `flowpilot/plugin`). The default export is a factory the PLUGINS loader calls with that API, so the
// package needs no import of flowpilot at run time; the JSDoc types come from `flowpilot/plugin` for editors.

/** @param {import('flowpilot/plugin').PluginApi} api */
export default function plugins({ definePlugin, p }) {
  const greet = definePlugin({
    type: 'hello.Greet',
    title: 'Greet',
    description: 'Writes a greeting to the task log and returns it as the `greeting` output.',
    properties: {
      name: p.string().required().describe('Who to greet (expressions allowed).'),
      times: p.integer({ min: 1, max: 10 }).default(1).describe('How many times the greeting is logged.'),
      shout: p.boolean().default(false).describe('Upper-case the greeting.'),
    },
    outputs: { greeting: { type: 'string', description: 'The greeting.' } },
    examples: [{ title: 'Greet the flow\'s input', code: 'id: greet\ntype: ai.service.plugin.hello.Greet\nname: "{{ inputs.who }}"\ntimes: 2\n' }],
    inline: true,
    async run(ctx, props) {
      const text = `Hello, ${props.name}!`;
      const greeting = props.shout ? text.toUpperCase() : text;
      for (let i = 0; i < props.times; i++) ctx.logger.info(greeting);
      return { state: 'SUCCESS', outputs: { greeting } };
    },
  });

  const count = definePlugin({
    type: 'hello.Count',
    title: 'Count',
    description: 'Counts the words of a text and writes them, one a line, to an internal-storage file.',
    properties: {
      text: p.string().required().describe('The text to count the words of.'),
    },
    outputs: {
      words: { type: 'integer', description: 'How many words the text has.' },
      uri: { type: 'uri', description: 'The file (`kestra:///...`) holding one word a line.' },
    },
    examples: [{ title: 'Count words', code: 'id: count\ntype: ai.service.plugin.hello.Count\ntext: "one two three"\n' }],
    async run(ctx, props) {
      const words = props.text.split(/\s+/).filter((w) => w !== '');
      const uri = await ctx.storage.put(`${ctx.storagePrefix}/words.txt`, Buffer.from(words.join('\n'), 'utf8'));
      return { state: 'SUCCESS', outputs: { words: words.length, uri } };
    },
  });

  return [greet, count];
}
