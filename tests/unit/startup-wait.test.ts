import { describe, expect, it } from 'vitest';
import { awaitStartup, type StartupTarget } from '../../src/main/terminal/readiness/startup.js';
import { ManualClock } from '../support/manual-clock.js';

/** A shell that has not started yet: the test says when it prints and when it shows a prompt. */
function slowShell(clock: ManualClock) {
  const ready: ((ok: boolean) => void)[] = [];
  const output = new Set<() => void>();
  const state = { starting: true, closed: false, integrationDropped: false };
  const target: StartupTarget = {
    clock,
    shellName: 'bash',
    onReady: (waiter) => void ready.push(waiter),
    onOutput: (listener) => {
      output.add(listener);
      return () => output.delete(listener);
    },
    starting: () => state.starting,
    exitCode: () => null,
    banner: () => '',
    printed: () => 'loading a slow rc',
    close: async () => {
      state.closed = true;
    },
    integrationTimedOut: () => {
      state.integrationDropped = true;
    },
  };
  return {
    target,
    state,
    print: () => [...output].forEach((listener) => listener()),
    prompt: () => {
      state.starting = false;
      ready.splice(0).forEach((waiter) => waiter(true));
    },
  };
}

const settled = async <T>(promise: Promise<T>) => {
  let outcome: 'pending' | 'resolved' | 'rejected' = 'pending';
  promise.then(
    () => (outcome = 'resolved'),
    () => (outcome = 'rejected'),
  );
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return () => outcome;
};

describe('a new shell: how long it may take to start', () => {
  it("a person's terminal waits for the first output up to its own bound, then gives the integration the startup bound", async () => {
    const clock = new ManualClock();
    const shell = slowShell(clock);
    const started = awaitStartup(shell.target, { timeoutMs: 1_000, firstOutputMs: 60_000, agent: false });
    const outcome = await settled(started);
    await clock.advance(30_000); // far past the startup bound, and still nothing printed
    expect(outcome()).toBe('pending');
    expect(shell.state.closed).toBe(false);
    shell.print();
    await started;
    await clock.advance(999);
    expect(shell.state.integrationDropped).toBe(false);
    await clock.advance(1);
    expect(shell.state.integrationDropped).toBe(true);
  });

  it("a person's shell that prints nothing by its bound is closed with startup_timeout, naming that bound", async () => {
    const clock = new ManualClock();
    const shell = slowShell(clock);
    const started = awaitStartup(shell.target, { timeoutMs: 1_000, firstOutputMs: 60_000, agent: false });
    started.catch(() => {});
    await clock.advance(60_000);
    await expect(started).rejects.toMatchObject({ code: 'startup_timeout', message: expect.stringContaining('printed nothing within 60000 ms') });
    expect(shell.state.closed).toBe(true);
  });

  it("an agent's terminal keeps the startup bound for its verified prompt: the first-output bound does not stretch it", async () => {
    const clock = new ManualClock();
    const shell = slowShell(clock);
    const started = awaitStartup(shell.target, { timeoutMs: 1_000, firstOutputMs: 60_000, agent: true });
    started.catch(() => {});
    shell.print(); // output is not a prompt
    await clock.advance(1_000);
    await expect(started).rejects.toMatchObject({ code: 'startup_timeout', message: expect.stringContaining('did not show a verified prompt within 1000 ms') });
    expect(shell.state.closed).toBe(true);
  });

  it('without a first-output bound, a person waits the startup bound, and a prompt in time leaves no timer behind', async () => {
    const clock = new ManualClock();
    const shell = slowShell(clock);
    const started = awaitStartup(shell.target, { timeoutMs: 1_000, agent: false });
    await clock.advance(500);
    shell.prompt();
    await started;
    expect(clock.pending).toBe(0);
    const late = slowShell(clock);
    const never = awaitStartup(late.target, { timeoutMs: 1_000, agent: false });
    never.catch(() => {});
    await clock.advance(1_000);
    await expect(never).rejects.toMatchObject({ code: 'startup_timeout' });
  });
});
