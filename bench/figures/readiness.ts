/** Readiness correctness: the engine scenario list run N times, as a pass rate. */
import { which } from '../../src/main/shells/resolve.js';
import type { TerminalSession } from '../../src/main/terminal/session/session.js';
import type { SendResult } from '../../src/shared/types.js';
import { SessionScope } from '../lib/engine.js';
import type { Figure } from '../lib/types.js';

interface Scenario {
  name: string;
  requires?: string;
  run(session: TerminalSession): Promise<void>;
}

function check(result: SendResult, expected: Partial<Pick<SendResult, 'status' | 'evidence' | 'exitCode' | 'output'>>, what: string): void {
  for (const [key, value] of Object.entries(expected) as Array<[keyof SendResult, unknown]>) {
    if (result[key] !== value) {
      throw new Error(`${what}: ${key} ${JSON.stringify(result[key])}, expected ${JSON.stringify(value)} (status ${result.status}/${result.evidence})`);
    }
  }
}

const waitMs = 10_000;

const scenarios: Scenario[] = [
  {
    name: 'echo → done/0',
    async run(t) {
      check(await t.send({ text: 'echo ready-check', waitMs }), { status: 'done', evidence: 'marker', exitCode: 0, output: 'ready-check' }, 'echo');
    },
  },
  {
    name: 'false → exit 1',
    async run(t) {
      check(await t.send({ text: 'false', waitMs }), { status: 'done', exitCode: 1 }, 'false');
    },
  },
  {
    name: 'sleep 0.3; echo x → done, not early',
    async run(t) {
      const t0 = performance.now();
      const r = await t.send({ text: 'sleep 0.3; echo x', waitMs });
      const elapsed = performance.now() - t0;
      check(r, { status: 'done', exitCode: 0, output: 'x' }, 'sleep');
      if (elapsed < 299) throw new Error(`sleep: settled after ${elapsed.toFixed(0)} ms`);
    },
  },
  {
    name: 'cat → waiting_input',
    async run(t) {
      check(await t.send({ text: 'cat', waitMs }), { status: 'waiting_input' }, 'cat');
      check(await t.send({ text: 'ping', waitMs }), { status: 'waiting_input', output: 'ping' }, 'cat answer');
      check(await t.send({ keys: ['C-d'], waitMs }), { status: 'done', exitCode: 0 }, 'cat EOF');
    },
  },
  {
    name: 'python3 input() → waiting_input, answered',
    requires: 'python3',
    async run(t) {
      check(await t.send({ text: `python3 -c 'print("got", input("q? "))'`, waitMs }), { status: 'waiting_input', output: 'q?' }, 'input()');
      check(await t.send({ text: 'answer', waitMs }), { status: 'done', exitCode: 0, output: 'got answer' }, 'input() answer');
    },
  },
  {
    name: 'unclosed quote → continuation',
    async run(t) {
      check(await t.send({ text: 'echo "open', waitMs }), { status: 'waiting_input', evidence: 'continuation' }, 'quote');
      check(await t.send({ text: 'closed"', waitMs }), { status: 'done', exitCode: 0, output: 'open\nclosed' }, 'quote closed');
    },
  },
  {
    name: 'fake marker → done with the real output',
    async run(t) {
      const t0 = performance.now();
      const r = await t.send({ text: `printf '\\033]7771;deadbeef;E;99;0;;/\\007fake\\n'; sleep 0.3; echo real`, waitMs });
      const elapsed = performance.now() - t0;
      check(r, { status: 'done', exitCode: 0 }, 'fake marker');
      if (!r.output.endsWith('real')) throw new Error(`fake marker: output ${JSON.stringify(r.output)}`);
      if (elapsed < 299) throw new Error(`fake marker: settled after ${elapsed.toFixed(0)} ms`);
    },
  },
];

export const readinessFigure: Figure = {
  id: 'readiness',
  title: 'Readiness correctness',
  rows: [
    {
      name: 'readiness.pass-rate',
      unit: '%',
      target: { metric: 'median', op: '>=', value: 100 },
      description: `${scenarios.length} scenarios (echo, false, sleep, cat, python input(), unclosed quote, fake marker) per round, bash`,
    },
  ],
  async run(opts) {
    const rounds = opts.pick(20, 3);
    const active = scenarios.filter((s) => !s.requires || which(s.requires) !== null);
    const skipped = scenarios.filter((s) => !active.includes(s)).map((s) => `${s.name} (no ${s.requires})`);
    const scope = new SessionScope(opts.home);
    const failures = new Map<string, { count: number; last: string }>();
    try {
      for (let round = 0; round < rounds; round++) {
        let session = await scope.open('bash');
        for (const scenario of active) {
          try {
            await scenario.run(session);
          } catch (error) {
            const entry = failures.get(scenario.name) ?? { count: 0, last: '' };
            entry.count++;
            entry.last = (error as Error).message;
            failures.set(scenario.name, entry);
            // A failed scenario may leave the terminal anywhere: carry on in a fresh one.
            await scope.close(session).catch(() => undefined);
            session = await scope.open('bash');
          }
        }
        await scope.close(session);
      }
    } finally {
      await scope.closeAll();
    }
    const total = rounds * active.length;
    const failed = [...failures.values()].reduce((sum, f) => sum + f.count, 0);
    const notes = [`${total - failed}/${total} passed over ${rounds} rounds`];
    for (const [name, f] of failures) notes.push(`FAIL ${f.count}x ${name}: ${f.last}`);
    if (skipped.length > 0) notes.push(`skipped: ${skipped.join(', ')}`);
    // One figure over every scenario run: a median of per-round rates would hide a rare failure.
    return [{ row: 'readiness.pass-rate', samples: [(100 * (total - failed)) / total], count: total, note: notes.join('; ') }];
  },
};
