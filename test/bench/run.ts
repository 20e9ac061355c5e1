// `npm run bench`: prints performance figures and ratios (never asserted in tests).
// BENCH=orchestration|inference|triggers|kube|kube-scale|archive|kube-memory|json|masking|render|blocks|steps|loops|cli|serdes selects one group
// (kube includes kube-scale, archive and kube-memory); default runs all. The orchestration group's figures, knobs
// (BENCH_DURATION_S, BENCH_FANOUT, ...) and how each is measured: docs/performance.md.
import { runOrchestrationBench } from './orchestration.js';

const only = process.env.BENCH;
if (!only || only === 'orchestration') await runOrchestrationBench();
if (!only || only === 'inference') {
  const { runInferenceBench } = await import('./inference.js');
  await runInferenceBench();
}
if (!only || only === 'triggers') {
  const { runTriggersBench } = await import('./triggers.js');
  await runTriggersBench();
  const { runScheduleBench } = await import('./schedule.js');
  await runScheduleBench();
}
if (!only || only === 'kube') {
  const { runKubeBench } = await import('./kube.js');
  await runKubeBench();
  const { runKubeScaleBench } = await import('./kube-scale.js');
  await runKubeScaleBench();
}
if (only === 'kube-scale') {
  const { runKubeScaleBench } = await import('./kube-scale.js');
  await runKubeScaleBench();
}
if (!only || only === 'kube' || only === 'archive') {
  const { runArchiveBench } = await import('./archive.js');
  await runArchiveBench();
}
if (!only || only === 'kube' || only === 'kube-memory') {
  const { runKubeMemoryBench } = await import('./kube-memory.js');
  await runKubeMemoryBench();
}
if (!only || only === 'json') {
  const { runJsonParseBench } = await import('./json-parse.js');
  await runJsonParseBench();
}
if (!only || only === 'masking') {
  const { runMaskingBench } = await import('./masking.js');
  await runMaskingBench();
}
if (!only || only === 'render') {
  const { runRenderBench } = await import('./render.js');
  await runRenderBench();
}
if (!only || only === 'blocks') {
  const { runBlocksBench } = await import('./blocks.js');
  await runBlocksBench();
}
if (!only || only === 'steps') {
  const { runStepsBench } = await import('./steps.js');
  await runStepsBench();
}
if (!only || only === 'loops') {
  const { runLoopsBench } = await import('./loops.js');
  await runLoopsBench();
}
if (!only || only === 'cli') {
  const { runCliBench } = await import('./cli.js');
  await runCliBench();
}
if (!only || only === 'serdes') {
  const { runSerdesBench } = await import('./serdes.js');
  await runSerdesBench();
}
