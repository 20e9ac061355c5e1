// Static checks of the two Dockerfiles (no Docker daemon here): base image, non-root user, a build stage compiling
// dist/ with scripts/build.mjs, a production install, commands running compiled JavaScript, and every COPY source
// exists in the repository and is not excluded by .dockerignore.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;
const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));

const images = [
  // scripts/build-ui.mjs and build-cli.mjs: the package's postinstall, which a production install runs (and skips: no
  // vite nor esbuild there).
  ['Dockerfile', ['operator', 'api', 'runner-image', 'scripts/build.mjs', 'crds', 'examples', 'ui', 'scripts/build-ui.mjs', 'scripts/build-cli.mjs']],
  ['runner-image/Dockerfile', ['operator', 'api', 'runner-image', 'scripts/build.mjs', 'scripts/build-ui.mjs', 'scripts/build-cli.mjs']],
] as const;

describe.each(images)('%s', (file, dirs) => {
  const text = readFileSync(join(ROOT, file), 'utf8');

  it('builds on node:20-bookworm-slim, runs compiled JavaScript as uid 10001 in /app with production dependencies', () => {
    expect(text).toMatch(/^FROM node:20-bookworm-slim$/m); // the final stage
    expect(text).toMatch(/^RUN node scripts\/build\.mjs$/m); // the build stage
    expect(text).toContain('COPY --from=build /app/dist ./dist');
    expect(text).toContain('COPY --from=deps /app/node_modules ./node_modules');
    expect(text).toMatch(/^WORKDIR \/app$/m);
    expect(text).toMatch(/^USER 10001:10001$/m);
    expect(text).toContain('npm ci --omit=dev');
    expect(text).not.toContain('tsx');
    const cmd = /^CMD \["node", "([^"]+)"\]$/m.exec(text);
    expect(cmd?.[1]).toMatch(/^(\/app\/)?dist\/.+\.js$/);
    expect(existsSync(join(ROOT, cmd![1]!.replace(/^\/app\//, ''))), `${cmd![1]} is built by scripts/build.mjs`).toBe(true);
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

it('the runner image has python3 and starts the compiled runner; node_modules, dist and .git stay out of the context', () => {
  const text = readFileSync(join(ROOT, 'runner-image/Dockerfile'), 'utf8');
  expect(text).toMatch(/apt-get install[^\n]*python3/);
  expect(text).toContain('CMD ["node", "/app/dist/runner-image/runner.js"]');
  expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git', '**/*.test.ts']));
});

it('the image builds the web UI in a stage of its own and ships ui/dist, which the API serves', () => {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  expect(text).toMatch(/^FROM node:20-bookworm-slim AS ui$/m);
  expect(text).toMatch(/^RUN node scripts\/build-ui\.mjs$/m);
  expect(text).toContain('COPY --from=ui /app/ui/dist ./ui/dist');
  expect(ignored).toContain('ui/dist'); // a local build never reaches the image: the stage builds its own
});

it('the chart starts the operator and the API from dist/', () => {
  for (const [file, entry] of [['operator-deployment.yaml', 'dist/operator/kube/main.js'], ['api-deployment.yaml', 'dist/api/kube-main.js']]) {
    const text = readFileSync(join(ROOT, 'charts/flowpilot/templates', file!), 'utf8');
    expect(text).toContain(`command: ["node", "${entry}"]`);
    expect(existsSync(join(ROOT, entry!))).toBe(true);
  }
});
