/**
 * The shell's own line editor is never a program waiting (issue 22): a confined zsh's multi-line
 * send once came back `waiting_input`. After `sleep 0.2` the last line's output, the end marker
 * and zsh's return to its line editor came in one burst; the probe saw zsh reading the terminal
 * (the read quiet period long passed) while the end marker was still on its way from the kernel.
 * Here the probe looks at a real confined shell whose line editor reads, with every quiet period
 * passed and no baseline: only the shell-editor rule keeps it from reporting evidence.
 */
import { mkdirSync, mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { readStat, sampleForeground } from '../../src/main/pty/proc.js';
import { resolveShell } from '../../src/main/shells/resolve.js';
import { probeLook, type ProbeTarget } from '../../src/main/terminal/readiness/probe.js';
import { TerminalSession } from '../../src/main/terminal/session/session.js';
import { hasCommand } from './helpers.js';
import { describeSandbox } from './sandbox-helpers.js';

const root = mkdtempSync(join(tmpdir(), 'tandem-probe-editor-'));
const ws = join(root, 'ws');
mkdirSync(ws, { recursive: true });
afterAll(() => rmSync(root, { recursive: true, force: true }));

const shells = ['bash', ...(hasCommand('zsh') ? ['zsh'] : [])];

/** Every quiet period long passed: only the rule under test can keep the look from evidence. */
const quietMs = 60_000;

/** The shell's own thread blocked on the terminal (its line editor's read or select). */
function shellReads(target: ProbeTarget): boolean {
  const sample = sampleForeground(target.shellPid, target.ttyPath!);
  return sample?.threads.some((thread) => thread.pid === target.shellPid && thread.watchesTty && (thread.kind === 'read' || thread.kind === 'poll')) ?? false;
}

describeSandbox('the shell’s own line editor, confined', () => {
  it.each(shells)(
    '%s at its prompt gives no evidence; a builtin read still does',
    async (shell) => {
      const session = await TerminalSession.start({
        shell: resolveShell(shell, process.env.PATH ?? ''),
        cwd: ws,
        origin: 'agent',
        baseEnv: { ...process.env, HOME: root, ZDOTDIR: undefined, HISTFILE: undefined },
        sandbox: { mode: 'workspace-write', network: false, agent: `editor-${shell}`, stateDir: join(root, 'state'), discoveryDir: join(root, 'discovery') },
      });
      try {
        // The pid Tandem watches is the shell inside the sandbox, not bubblewrap or a launcher.
        expect(readStat(session.pid)?.comm).toBe(shell);
        const target: ProbeTarget = { shellPid: session.pid, ttyPath: readlinkSync(`/proc/${session.pid}/fd/0`), procTier: true };
        // The line editor blocks on the terminal: the probe sees the shell itself reading it.
        await expect.poll(() => shellReads(target), { timeout: 20_000 }).toBe(true);
        expect(await probeLook(target, null, quietMs)).toEqual({ evidence: null, quietDueMs: null });
        // Through a send too: a multi-line command whose last line follows a silence settles on its marker.
        const lines = await session.send({ text: 'echo one\nsleep 0.2\necho two', waitMs: 20_000 });
        expect(lines, JSON.stringify({ ...lines, output: undefined })).toMatchObject({ status: 'done', exitCode: 0 });
        await expect.poll(() => shellReads(target), { timeout: 20_000 }).toBe(true);
        expect(await probeLook(target, null, quietMs)).toEqual({ evidence: null, quietDueMs: null });

        // A builtin read in line mode is the shell waiting for a line: that still counts.
        const asked = await session.send({ text: 'read -r answer; echo "got $answer"', waitMs: 20_000 });
        expect(asked).toMatchObject({ status: 'waiting_input', evidence: 'read' });
        expect(await probeLook(target, null, quietMs)).toMatchObject({ evidence: 'read' });
        expect(await session.send({ text: 'box', input: true, waitMs: 20_000 })).toMatchObject({ status: 'done', output: 'got box' });
        // And a single key with echo on (zsh `read -k`, bash `read -n 1`).
        const key = await session.send({
          text: shell === 'zsh' ? 'read -k key; echo; echo "key $key"' : 'read -n 1 key; echo; echo "key $key"',
          waitMs: 20_000,
        });
        expect(key).toMatchObject({ status: 'waiting_input', evidence: 'read' });
        expect(await session.send({ text: 'y', submit: false, input: true, waitMs: 20_000 })).toMatchObject({
          status: 'done',
          output: expect.stringContaining('key y'),
        });
      } finally {
        await session.close();
      }
    },
    90_000,
  );
});
