// Black-box, through the whole embedded service (API + controller, real SQLite): hostile templates end their task
// FAILED with the expression limit named, while /healthz keeps answering and a normal flow started at the same time
// succeeds; templates and validators that cannot run are refused at save with 422 naming the field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../support/embedded.js';

const BUDGET_MS = 200;
let e: Embedded;

beforeAll(async () => {
  e = await startEmbedded({ PATH: process.env.PATH, EXPRESSION_TIMEOUT_MS: String(BUDGET_MS) });
});
afterAll(async () => {
  await e?.close();
});

const flow = (id: string, tasks: string): string => `id: ${id}\nnamespace: safety\ntasks:\n${tasks}`;

const FLOWS = {
  // The review's reproduction (119 s of backtracking on V8's RegExp): on RE2 it is linear and simply works.
  review_regex: flow('review_regex', `  - id: r
    type: ai.service.plugin.core.debug.Return
    format: "{{ 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!' | replace({'(a+)+$':'x'}, regexp=true) }}"
`),
  // A regex that backtracks on V8, over a text long enough that even linear time exceeds the budget.
  slow_regex: flow('slow_regex', `  - id: r
    type: ai.service.plugin.core.debug.Return
    format: "{{ range(1, 99999) | join('aaaa') | replace({'(.*a){20}(a+)+$':'x'}, regexp=true) }}"
`),
  jq_forever: flow('jq_forever', `  - id: cond
    type: ai.service.plugin.core.flow.If
    condition: "{{ {} | jq('last(repeat(1))') | first }}"
    then:
      - { id: never, type: ai.service.plugin.core.log.Log, message: unreachable }
`),
  normal: flow('normal', `  - id: a
    type: ai.service.plugin.core.debug.Return
    format: "{{ {'b': [1, 2, 3]} | jq('.b | add') | first }}"
  - { id: b, type: ai.service.plugin.core.log.Log, message: "{{ outputs.a.value }} done" }
`),
};

/** Polls /healthz back to back until `stop()`; reports the worst latency seen and the number of polls. */
function pollHealth(): { stop(): Promise<{ worst: number; polls: number }> } {
  let stopped = false;
  let worst = 0;
  let polls = 0;
  const origin = e.base.replace(/\/api\/v1$/, '');
  const loop = (async () => {
    while (!stopped) {
      const start = performance.now();
      const res = await fetch(`${origin}/healthz`);
      await res.text();
      expect(res.status).toBe(200);
      worst = Math.max(worst, performance.now() - start);
      polls++;
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { worst, polls };
    },
  };
}

const taskRun = (exec: any, taskId: string): any => exec.taskRunList.find((t: any) => t.taskId === taskId);
const ended = (x: any): boolean => ['SUCCESS', 'FAILED', 'WARNING', 'KILLED'].includes(x?.state?.current);

describe('hostile templates through the embedded service', () => {
  it('end FAILED with EXPRESSION_TIMEOUT_MS named, /healthz stays fast, and a concurrent normal flow succeeds', async () => {
    for (const yaml of Object.values(FLOWS)) await e.createFlow(yaml);
    const poller = pollHealth();
    const started = await Promise.all(Object.keys(FLOWS).map((id) => e.execute('safety', id)));
    const [review, slow, jq, normal] = await Promise.all(started.map((x) => e.waitFor(x.id, ended, 60_000)));
    const health = await poller.stop();

    expect(review.state.current).toBe('SUCCESS');
    expect(taskRun(review, 'r').outputs.value).toBe('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!');
    for (const [exec, task] of [[slow, 'r'], [jq, 'cond']] as const) {
      expect(exec.state.current).toBe('FAILED');
      expect(taskRun(exec, task).state.current).toBe('FAILED');
      expect(taskRun(exec, task).error).toContain(`over the limit of ${BUDGET_MS}`);
      expect(taskRun(exec, task).error).toContain('setting EXPRESSION_TIMEOUT_MS');
    }
    expect(normal.state.current).toBe('SUCCESS');
    expect(taskRun(normal, 'a').outputs.value).toBe('6');
    expect(health.polls).toBeGreaterThan(3);
    // Each hostile render holds the event loop for at most about the budget, and the controller may run the two
    // hostile ones in the same pass: 2 x the budget, plus slack for a loaded test machine (without the budget,
    // jq('last(repeat(1))') never returns and /healthz never answers again).
    expect(health.worst).toBeLessThan(2 * BUDGET_MS + 400);
  });
});

describe('templates and validators that cannot run are refused at save', () => {
  it.each([
    ['{{ 1 + }}', 'tasks[0].message', 'Invalid expression'],
    ['{{ x | nosuchfilter }}', 'tasks[0].message', 'unknown filter `nosuchfilter`'],
    ['{{ nosuchfn() }}', 'tasks[0].message', 'unknown function `nosuchfn`'],
    ['{{ x is nosuchtest }}', 'tasks[0].message', 'unknown test `nosuchtest`'],
  ])('%s → 422 at %s', async (template, path, message) => {
    const res = await e.json('/flows', {
      method: 'POST', headers: { 'Content-Type': 'application/x-yaml' },
      body: flow('bad_template', `  - { id: l, type: ai.service.plugin.core.log.Log, message: ${JSON.stringify(template)} }\n`),
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toContain(path);
    expect(JSON.stringify(res.body)).toContain(message);
  });

  it('a validator RE2 cannot run → 422 at inputs[0].validator', async () => {
    const res = await e.json('/flows', {
      method: 'POST', headers: { 'Content-Type': 'application/x-yaml' },
      body: `id: bad_validator\nnamespace: safety\ninputs:\n  - { id: a, type: STRING, validator: "(?<=x)y" }\ntasks:\n  - { id: l, type: ai.service.plugin.core.log.Log, message: hi }\n`,
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toContain('inputs[0].validator');
    expect(JSON.stringify(res.body)).toContain('lookaround and backreferences are not supported');
  });

  it('a valid flow with templates still saves', async () => {
    const res = await e.json('/flows', {
      method: 'POST', headers: { 'Content-Type': 'application/x-yaml' },
      body: flow('good_template', "  - { id: l, type: ai.service.plugin.core.log.Log, message: \"{{ inputs.x ?? 'y' | upper }}\" }\n"),
    });
    expect(res.status).toBe(200);
  });
});
