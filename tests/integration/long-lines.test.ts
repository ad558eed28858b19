/**
 * A line longer than the terminal's line mode keeps (4095 bytes on Linux) reaches the shell
 * whole or not at all (src/main/terminal/session/line-room.ts). After an end marker the
 * person's prompt hooks still run with the terminal in line mode; a long line typed then lost
 * all but its first 4095 bytes, and the shell ran that part or waited at a continuation prompt
 * (zsh's `quote>` after a 20,000-byte alias line, in a CI run under load). The hooks here hold
 * the prompt until the test lets go, so the long line always arrives inside that stretch.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { canonicalRoom } from '../../src/main/terminal/session/line-room.js';
import type { TerminalSession } from '../../src/main/terminal/session/session.js';
import { availableShells, makeHome, SessionPool } from './helpers.js';

// The hook holds the prompt while ~/hold exists (a person's slow git prompt, direnv), then says it is through.
// Per shell (another terminal's hook may finish at any time), and only after the command that
// asked for it (`want`): a hook still running from an earlier prompt never answers.
const holdLoop = 'while [ -e "$HOME/hold" ]; do sleep 0.02; done; if [ -e "$HOME/want.$$" ]; then mv "$HOME/want.$$" "$HOME/through.$$"; fi';
const h = makeHome({
  '.bashrc': `PROMPT_COMMAND='${holdLoop}'\n`,
  '.zshrc': `__hold() { ${holdLoop} }\nprecmd_functions+=(__hold)\n`,
});
const pool = new SessionPool(h.home);
const hold = join(h.home, 'hold');
afterEach(() => rmSync(hold, { force: true }));
afterAll(async () => {
  rmSync(hold, { force: true });
  await pool.closeAll();
  h.cleanup();
});

const long = 'A'.repeat(6000);
const rawShells = availableShells.filter((shell) => shell !== 'sh');

/** Whether a pending promise has settled after the shell had time to act (a settled one can only be wrong). */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  return settled;
}

async function heldPrompt(t: TerminalSession): Promise<void> {
  // The last prompt's hooks first run through (a send settles at the end marker, before them).
  const through = join(h.home, `through.${t.pid}`);
  rmSync(through, { force: true });
  expect((await t.send({ text: ': > "$HOME/want.$$"' })).status).toBe('done');
  await expect.poll(() => existsSync(through), { timeout: 10_000 }).toBe(true);
  writeFileSync(hold, '');
  // Settles at its end marker; the hook then holds the terminal in line mode.
  expect((await t.send({ text: 'true' })).status).toBe('done');
}

describe.each(rawShells)('%s: a long line while the prompt hooks still run', (shell) => {
  const open = () => pool.open(shell, { startupFiles: 'user' });

  it('waits for the line editor and runs the whole line', async () => {
    const t = await open();
    await heldPrompt(t);
    const sent = t.send({ text: `printf %s '${long}' | wc -c` });
    expect(await settledYet(sent)).toBe(false);
    rmSync(hold);
    const r = await sent;
    expect(r).toMatchObject({ status: 'done', exitCode: 0 });
    expect(r.output.trim()).toBe('6000');
  });

  it('gives up at its bound with busy, and nothing is written', async () => {
    const t = await open();
    await heldPrompt(t);
    await expect(t.send({ text: `echo '${long}' > written`, waitMs: 300 })).rejects.toMatchObject({ code: 'busy' });
    rmSync(hold);
    const r = await t.send({ text: 'echo after' });
    expect(r).toMatchObject({ status: 'done', output: 'after' });
    expect(existsSync(join(h.home, 'written'))).toBe(false);
    expect(t.commandsSince(0).some((c) => c.command?.includes('AAAA'))).toBe(false);
  });

  it('writes nothing when the person takes over while it waits', async () => {
    const t = await open();
    await heldPrompt(t);
    const takeover = new AbortController();
    const sent = t.send({ text: `echo '${long}' > written`, handoff: takeover.signal });
    expect(await settledYet(sent)).toBe(false);
    takeover.abort();
    await expect(sent).rejects.toMatchObject({ code: 'user_control' });
    rmSync(hold);
    expect((await t.send({ text: 'echo after' })).output).toBe('after');
    expect(existsSync(join(h.home, 'written'))).toBe(false);
  });

  it('a long line of input to a program reading raw goes whole; to one reading lines, it is refused', async () => {
    const t = await open();
    // zsh's `vared` and bash's `read -e` read raw, as line editors do.
    const raw = shell === 'zsh' ? 'x=; vared x; echo ${#x}' : 'IFS= read -r -e x; echo ${#x}';
    expect((await t.send({ text: raw, waitMs: 500 })).status).not.toBe('done');
    const r = await t.send({ text: long, input: true });
    expect(r).toMatchObject({ status: 'done' });
    expect(r.output).toContain('6000');
    const lines = await t.send({ text: 'IFS= read -r x; echo "got ${#x}"', waitMs: 10_000 });
    expect(lines).toMatchObject({ status: 'waiting_input' });
    await expect(t.send({ text: long, input: true })).rejects.toMatchObject({ code: 'input_too_large' });
    expect((await t.send({ text: 'short', input: true })).output).toContain('got 5');
  });
});

describe.runIf(availableShells.includes('sh'))('sh: no line editor', () => {
  it('refuses a line its line mode would cut, and nothing is written', async () => {
    const t = await pool.open('sh', { startupFiles: 'clean' });
    await expect(t.send({ text: `echo '${long}' > written` })).rejects.toMatchObject({ code: 'input_too_large' });
    expect((await t.send({ text: 'echo after' })).output).toBe('after');
    expect(existsSync(join(h.home, 'written'))).toBe(false);
    // A line that fits still goes.
    const fits = 'B'.repeat((canonicalRoom(process.platform) ?? 4095) - 64);
    expect((await t.send({ text: `printf %s '${fits}' | wc -c` })).output.trim()).toBe(String(fits.length));
  });
});
