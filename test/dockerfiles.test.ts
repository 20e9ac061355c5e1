// Static checks of the two Dockerfiles (no Docker daemon here): base image, non-root user, production install with
// tsx, and every COPY source exists in the repository and is not excluded by .dockerignore.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;
const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));

const images = [
  ['Dockerfile', ['operator', 'api', 'runner-image']],
  ['runner-image/Dockerfile', ['operator', 'runner-image']],
] as const;

describe.each(images)('%s', (file, dirs) => {
  const text = readFileSync(join(ROOT, file), 'utf8');

  it('builds on node:20-bookworm-slim, runs as uid 10001 in /app, installs production dependencies and tsx', () => {
    expect(text).toMatch(/^FROM node:20-bookworm-slim$/m); // the final stage
    expect(text).toContain('COPY --from=deps /app/node_modules ./node_modules');
    expect(text).toMatch(/^WORKDIR \/app$/m);
    expect(text).toMatch(/^USER 10001:10001$/m);
    expect(text).toContain('npm ci --omit=dev');
    expect(text).toContain('mv /tmp/tsx/lib/node_modules/tsx node_modules/tsx'); // a real directory: /app is copied verbatim
    expect(text).toMatch(/^CMD \["node", "--import", "tsx", /m);
  });

  it('copies sources that exist and are not ignored', () => {
    const copies = [...text.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(/\s+/));
    for (const dir of dirs) expect(copies).toContain(dir);
    for (const src of copies) {
      expect(existsSync(join(ROOT, src)), src).toBe(true);
      expect(ignored, src).not.toContain(src);
    }
  });
});

it('the runner image has python3 and starts runner-image/runner.ts; node_modules and .git stay out of the context', () => {
  const text = readFileSync(join(ROOT, 'runner-image/Dockerfile'), 'utf8');
  expect(text).toMatch(/apt-get install[^\n]*python3/);
  expect(text).toContain('"/app/runner-image/runner.ts"');
  expect(existsSync(join(ROOT, 'runner-image/runner.ts'))).toBe(true);
  expect(ignored).toEqual(expect.arrayContaining(['node_modules', '.git', '**/*.test.ts']));
});
