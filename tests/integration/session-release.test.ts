import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { TerminalSession } from '../../src/main/terminal/session/session.js';
import { runs, unixPty } from '../support/capabilities.js';
import { resolveShell } from '../../src/main/shells/resolve.js';
import { makeHome } from './helpers.js';

// Forced collections, to see whether anything still holds a closed terminal.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const home = makeHome();
afterAll(() => home.cleanup());

describe.runIf(runs('closed sessions are released', unixPty))('a closed terminal', () => {
  it('is collectable as soon as its close resolves, not held by the PTY thread for its trailing output', async () => {
    const ref = await (async () => {
      const session = await TerminalSession.start({
        shell: resolveShell('bash'),
        cwd: home.home,
        origin: 'agent',
        baseEnv: { ...process.env, HOME: home.home, ZDOTDIR: undefined, HISTFILE: undefined },
        cols: 80,
        rows: 24,
      });
      expect(await session.send({ text: 'echo released' })).toMatchObject({ status: 'done', output: 'released' });
      await session.close();
      return new WeakRef(session);
    })();
    // Two passes with turns between: finalizers and promise jobs that held it run after the first.
    for (let i = 0; i < 3; i += 1) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(ref.deref()).toBeUndefined();
  });
});
