// Runs once before the test files: compiles dist/ (scripts/build.mjs), because the simulated kubelet runs task Pods
// with the images' real commands (`node /app/dist/runner-image/runner.js`), so the compiled output is what is tested;
// and rebuilds the CLI (scripts/build-cli.mjs) when its sources changed, so test/cli runs the build users run.
import { buildDist } from '../scripts/build.mjs';
import { buildCli, currentBuild } from '../scripts/build-cli.mjs';

export default async function setup(): Promise<void> {
  await buildDist();
  if (!currentBuild()) await buildCli();
}
