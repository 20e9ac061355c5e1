// Runs once before the test files: compiles dist/ (scripts/build.mjs), because the simulated kubelet runs task Pods
// with the images' real commands (`node /app/dist/runner-image/runner.js`), so the compiled output is what is tested.
import { buildDist } from '../scripts/build.mjs';

export default async function setup(): Promise<void> {
  await buildDist();
}
