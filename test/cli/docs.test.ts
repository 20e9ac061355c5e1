// docs/cli.md is current: its generated reference (every command's help, the exit code table) is what the program
// prints now (regenerate with `npx tsx cli/docs.ts`), and every command is documented.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { currentDoc, DOC } from '../../cli/docs.js';

describe('docs/cli.md', () => {
  it('matches the program\'s own help (npx tsx cli/docs.ts regenerates it)', () => {
    const text = readFileSync(DOC, 'utf8');
    expect(text).toBe(currentDoc(text));
    for (const c of ['flow validate', 'flow deploy', 'run', 'execution get', 'logs', 'kv set', 'trigger backfill', 'server']) {
      expect(text).toContain(`### flowpilot ${c}`);
    }
  });
});
