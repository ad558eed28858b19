/**
 * What the person does while they hold an agent's terminal reaches the agent only if they share
 * it on hand-back (agent-api.md, `handoff.summary`: default off). Attacked as the agent would
 * through its MCP tools: terminal_read by lines and since a cursor, terminal_wait from a cursor
 * taken before the takeover, and screen tricks after the hand-back that move lines around.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { personNotice } from '../../src/main/terminal/session/person-spans.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gate } from '../support/gate.js';
import { procfs, runs } from '../support/capabilities.js';
import { until } from '../support/until.js';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';

let f: AgentFixture;
let client: Client;
beforeAll(async () => {
  f = await startAgentFixture();
  const { token } = f.layer.pairAgent({ name: 'reader' });
  f.layer.setAgentPolicy({ name: 'reader', policy: 'always' });
  client = await f.client(token);
});
afterAll(async () => {
  await f.close();
});
afterEach(async () => {
  await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
});

async function attachAsPerson(id: string): Promise<string> {
  const { attachment } = await f.host.attach(id, 'person-ui', { frame: () => undefined, closed: () => undefined, writable: () => undefined });
  return attachment.id;
}

/** The person runs `command` in terminal `id` and it finishes (their own view shows it: the host's screen). */
async function personRuns(id: string, view: string, command: string): Promise<void> {
  await f.host.input(view, `${command}\r`, true);
  await until(() => f.host.get(id).view().lastCommand?.command === command, `the person's ${command}`);
}

const everything = (value: unknown) => JSON.stringify(value);

describe("the person's output under their lease", () => {
  it.each(['bash', 'zsh'])(
    '%s: kept from terminal_read and terminal_wait during and after a private hand-back, however the agent moves lines',
    async (shell) => {
      const nonce = String(Math.floor(Math.random() * 1e9));
      const secret = `secret-${nonce}`;
      const { id } = (await f.call(client, 'terminal_open', { title: 'private', shell })) as { id: string };
      const mine = await f.call(client, 'terminal_send', { id, text: 'echo agent-$((40+2))' });
      expect(mine).toMatchObject({ status: 'done', output: 'agent-42' });
      const before = mine.cursor as string;

      const view = await attachAsPerson(id);
      // Past the width: the secret is on the wrapped part of the line, which a reflow moves.
      await personRuns(id, view, `printf '%0150d secret-%s\\n' 0 ${nonce}`);
      await until(() => f.host.get(id).session.screen.text.includes(secret), "the person's output on their screen");
      // A window title their output sets is theirs too (round s41 H4).
      await personRuns(id, view, `printf '\\033]2;title-%s\\007' ${nonce}`);
      await until(() => f.host.get(id).view().program === `title-${nonce}`, 'the title');
      expect(everything(await f.call(client, 'terminal_list'))).not.toContain(`title-${nonce}`);
      // While they hold it.
      const held = await f.call(client, 'terminal_read', { id });
      expect(everything(held)).not.toContain(secret);
      expect(held.text).toContain(personNotice);
      expect(everything(await f.call(client, 'terminal_read', { id, since: before }))).not.toContain(secret);

      f.host.handBack(id);
      // The hand-back's own result (a wait from before) says what ran, not what it printed.
      const back = await f.call(client, 'terminal_wait', { id, since: before, waitMs: 10_000 });
      expect(everything(back)).not.toContain(secret);
      for (const read of [{ id }, { id, since: before }, { id, offset: 0, count: 200 }]) {
        const text = everything(await f.call(client, 'terminal_read', read));
        expect(text, JSON.stringify(read)).not.toContain(secret);
      }
      expect(everything(await f.call(client, 'terminal_list'))).not.toContain(`title-${nonce}`);
      // The agent's own line from before the takeover is still its to read.
      expect((await f.call(client, 'terminal_read', { id })).text).toContain('agent-42');

      // Lines moved by the agent's programs stay hidden: inserted lines above, deleted lines
      // between, a scroll region, then a full scroll of the screen into the scrollback.
      for (const moves of [
        '\\033[1;1H\\033[5L',
        '\\033[2;1H\\033[1M',
        '\\033[3;10r\\033[3;1H\\033[2S\\033[r',
        '\\033[1;1H\\033[3@',
        // Reverse index at the top row, index and next-line at a region's bottom (round s41 H1).
        '\\033[H\\033M\\033M\\033M\\033M\\033M\\033M\\033[32;1H',
        '\\033[2;20r\\033[20;1H\\033D\\033D\\033E\\033E\\n\\n\\033[r\\033[32;1H',
      ]) {
        const moved = await f.call(client, 'terminal_send', { id, text: `printf '${moves}'` });
        expect(everything(moved)).not.toContain(secret);
        expect(everything(await f.call(client, 'terminal_read', { id }))).not.toContain(secret);
      }
      // The person narrows and widens the window: the reflow shows nothing of theirs (round s41 H2).
      for (const [cols, rows] of [
        [30, 32],
        [200, 40],
        [120, 32],
      ] as const) {
        f.host.get(id).session.resize(cols, rows);
        expect(everything(await f.call(client, 'terminal_read', { id, offset: 0, count: 400, maxBytes: 262_144 }))).not.toContain(secret);
      }
      const scrolled = await f.call(client, 'terminal_send', { id, text: 'seq 1 80' });
      expect(everything(scrolled)).not.toContain(secret);
      expect(everything(await f.call(client, 'terminal_read', { id, offset: 0, count: 400, maxBytes: 262_144 }))).not.toContain(secret);
      // What the agent runs after the hand-back is its own again.
      expect(await f.call(client, 'terminal_send', { id, text: 'echo after-$((3+4))' })).toMatchObject({ status: 'done', output: 'after-7' });
      expect((await f.call(client, 'terminal_read', { id })).text).toContain('after-7');
    },
  );

  it('shared on hand-back: the agent reads what the person printed', async () => {
    const nonce = String(Math.floor(Math.random() * 1e9));
    const { id } = (await f.call(client, 'terminal_open', { title: 'shared', shell: 'bash' })) as { id: string };
    const before = (await f.call(client, 'terminal_send', { id, text: 'true' })).cursor as string;
    const view = await attachAsPerson(id);
    await personRuns(id, view, `printf 'shared-%s\\n' ${nonce}`);
    expect(everything(await f.call(client, 'terminal_read', { id }))).not.toContain(`shared-${nonce}`);
    f.host.handBack(id, { shareOutput: true });
    expect((await f.call(client, 'terminal_read', { id })).text).toContain(`shared-${nonce}`);
    expect((await f.call(client, 'terminal_read', { id, since: before })).text).toContain(`shared-${nonce}`);
  });

  it('a full-screen program the person left open stays theirs until it ends; the agent answers it blind', async () => {
    const nonce = String(Math.floor(Math.random() * 1e9));
    const secret = `alt-${nonce}`;
    const { id } = (await f.call(client, 'terminal_open', { title: 'alt', shell: 'bash' })) as { id: string };
    await f.call(client, 'terminal_send', { id, text: 'true' });
    const view = await attachAsPerson(id);
    await f.host.input(view, `printf '\\033[?1049h\\033[Halt-%s' ${nonce}; read -r x; printf '\\033[?1049l'; echo got-$x\r`, true);
    await until(() => f.host.get(id).session.screen.altScreen && f.host.get(id).session.screen.text.includes(secret), 'the alternate screen');
    f.host.handBack(id);
    expect(everything(await f.call(client, 'terminal_read', { id }))).not.toContain(secret);
    const waited = await f.call(client, 'terminal_wait', { id, waitMs: 5_000 });
    expect(everything(waited)).not.toContain(secret);
    const answered = await f.call(client, 'terminal_send', { id, text: 'yes', waitMs: 10_000 });
    expect(everything(answered)).not.toContain(secret);
    expect(answered).toMatchObject({ status: 'done' });
    // The answer's result says what it could not show, and why.
    expect(answered.output).toContain(personNotice);
    const after = await f.call(client, 'terminal_read', { id });
    expect(everything(after)).not.toContain(secret);
    // The person's command printed got-yes before its prompt: theirs too. The agent's next is its own.
    expect(await f.call(client, 'terminal_send', { id, text: 'echo mine-$((3*3))', waitMs: 10_000 })).toMatchObject({ status: 'done', output: 'mine-9' });
    expect(everything(await f.call(client, 'terminal_read', { id }))).not.toContain(secret);
  });

  it("a program of the person's still running at the hand-back stays theirs until the prompt, stopped and resumed too", async () => {
    const nonce = String(Math.floor(Math.random() * 1e9));
    const file = join(f.project, `notes-${nonce}.txt`);
    writeFileSync(file, Array.from({ length: 10 }, (_, i) => `line ${i} pager-${nonce}`).join('\n'));
    const { id } = (await f.call(client, 'terminal_open', { title: 'pager', shell: 'bash' })) as { id: string };
    await f.call(client, 'terminal_send', { id, text: 'true' });
    const view = await attachAsPerson(id);
    await f.host.input(view, `less ${file}\r`, true);
    await until(() => f.host.get(id).session.screen.text.includes(`pager-${nonce}`), 'the pager');
    f.host.handBack(id);
    for (const step of [{ keys: ['C-z'], input: true }, { text: 'fg' }, { keys: ['q'], input: true }]) {
      const result = await f.call(client, 'terminal_send', { id, ...step, waitMs: 5_000 });
      expect(everything(result), JSON.stringify(step)).not.toContain(`pager-${nonce}`);
      expect(everything(await f.call(client, 'terminal_read', { id }))).not.toContain(`pager-${nonce}`);
    }
    // Back at the prompt, the agent's own output shows again.
    expect(await f.call(client, 'terminal_send', { id, text: 'echo mine-$((2+2))', waitMs: 10_000 })).toMatchObject({ status: 'done', output: 'mine-4' });
    expect((await f.call(client, 'terminal_read', { id })).text).toContain('mine-4');

    // A command still running at the hand-back prints later: still the person's.
    const g = gate(f.project);
    await f.host.input(view, `until [ -e ${g.path} ]; do sleep 0.05; done; echo late-${nonce}\r`, true);
    await until(() => f.host.get(id).ops.status === 'running', "the person's command");
    f.host.handBack(id);
    const waiting = f.call(client, 'terminal_wait', { id, waitMs: 20_000 });
    g.open();
    expect(everything(await waiting)).not.toContain(`late-${nonce}`);
    await until(() => f.host.get(id).ops.status === 'idle', 'the prompt');
    expect(everything(await f.call(client, 'terminal_read', { id, offset: 0, count: 400 }))).not.toContain(`late-${nonce}`);
    g.dispose();
  });

  it.each(['bash', 'zsh'])('%s: a line the person submits as they hand back is theirs, though the shell had not started it (round s42 N5)', async (shell) => {
    const nonce = String(Math.floor(Math.random() * 1e9));
    const { id } = (await f.call(client, 'terminal_open', { title: 'instant', shell })) as { id: string };
    const before = (await f.call(client, 'terminal_send', { id, text: 'true' })).cursor as string;
    const view = await attachAsPerson(id);
    // Enter and the hand-back in the same instant: the shell is still at its prompt.
    const typing = f.host.input(view, `sleep 0.2; printf 'race-%s\\n' ${nonce}\r`, true);
    f.host.handBack(id);
    await typing;
    await until(() => f.host.get(id).session.screen.text.includes(`race-${nonce}`), "the person's output on their screen");
    await until(() => f.host.get(id).ops.status === 'idle', 'the prompt');
    for (const read of [{ id }, { id, since: before }, { id, offset: 0, count: 200 }]) {
      expect(everything(await f.call(client, 'terminal_read', read)), JSON.stringify(read)).not.toContain(`race-${nonce}`);
    }
    expect(everything(await f.call(client, 'terminal_wait', { id, since: before, waitMs: 2_000 }))).not.toContain(`race-${nonce}`);
    // The agent's next command is its own to read.
    expect(await f.call(client, 'terminal_send', { id, text: 'echo mine-$((8*8))', waitMs: 10_000 })).toMatchObject({ status: 'done', output: 'mine-64' });
    expect(everything(await f.call(client, 'terminal_read', { id, offset: 0, count: 200 }))).not.toContain(`race-${nonce}`);
  });

  it("a line the person typed ahead while their command ran stays theirs when the agent's Ctrl+C releases it (round s41 H5)", async () => {
    const nonce = String(Math.floor(Math.random() * 1e9));
    const { id } = (await f.call(client, 'terminal_open', { title: 'ahead', shell: 'bash' })) as { id: string };
    const before = (await f.call(client, 'terminal_send', { id, text: 'true' })).cursor as string;
    const view = await attachAsPerson(id);
    await f.host.input(view, 'sleep 30\r', true);
    await until(() => f.host.get(id).ops.status === 'running', "the person's command");
    // Typed ahead: it waits in the terminal's input until the shell reads its next line.
    await f.host.input(view, `printf 'ahead-%s\\n' ${nonce}\r`, true);
    f.host.handBack(id);
    await f.call(client, 'terminal_signal', { id, signal: 'SIGINT' });
    await until(() => f.host.get(id).session.screen.text.includes(`ahead-${nonce}`), 'the typed-ahead line run');
    await until(() => f.host.get(id).ops.status === 'idle', 'the prompt');
    expect(everything(await f.call(client, 'terminal_wait', { id, since: before, waitMs: 2_000 }))).not.toContain(`ahead-${nonce}`);
    for (const read of [{ id }, { id, since: before }, { id, offset: 0, count: 200 }]) {
      expect(everything(await f.call(client, 'terminal_read', read)), JSON.stringify(read)).not.toContain(`ahead-${nonce}`);
    }
    expect(await f.call(client, 'terminal_send', { id, text: 'echo mine-$((9*9))', waitMs: 10_000 })).toMatchObject({ status: 'done', output: 'mine-81' });
    expect(everything(await f.call(client, 'terminal_read', { id, offset: 0, count: 200 }))).not.toContain(`ahead-${nonce}`);
  });

  it.runIf(runs("the person's processes, read from /proc", procfs)).each([
    [
      'a job a typed-ahead line starts after the hand-back',
      (g: string, n: string) => ['sleep 1\r', `(until [ -e ${g} ]; do sleep 0.05; done; printf 'late-%s\\n' ${n}) &\r`],
    ],
    ['a setsid daemon', (g: string, n: string) => [`setsid sh -c 'until [ -e ${g} ]; do sleep 0.05; done; printf "late-%s\\n" ${n}' &\r`]],
    ['a process substitution', (g: string, n: string) => [`echo >(until [ -e ${g} ]; do sleep 0.05; done; printf 'late-%s\\n' ${n})\r`]],
  ] as const)("%s of the person's prints after the hand-back: still theirs (round s44)", async (_what, lines) => {
    const nonce = String(Math.floor(Math.random() * 1e9));
    const { id } = (await f.call(client, 'terminal_open', { title: 'later', shell: 'bash' })) as { id: string };
    await f.call(client, 'terminal_send', { id, text: 'true' });
    const view = await attachAsPerson(id);
    const g = gate(f.project);
    const typed = lines(g.path, nonce);
    for (const line of typed) await f.host.input(view, line, true);
    const ran = () => f.host.get(id).ops.status === 'idle' && (f.host.get(id).view().lastCommand?.command ?? '').includes(g.path);
    // A typed-ahead line is handed back before the shell runs it: its job starts after the hand-back.
    if (typed.length === 1) await until(ran, 'the prompt after their line');
    f.host.handBack(id);
    await until(ran, 'their line run');
    // The agent's commands run while the person's process waits; then it prints.
    expect(await f.call(client, 'terminal_send', { id, text: 'echo mine-1', waitMs: 10_000 })).toMatchObject({ status: 'done' });
    g.open();
    await until(() => f.host.get(id).session.screen.text.includes(`late-${nonce}`), "the person's late output");
    const after = await f.call(client, 'terminal_send', { id, text: 'echo mine-2', waitMs: 10_000 });
    expect(everything(after)).not.toContain(`late-${nonce}`);
    for (const read of [{ id }, { id, offset: 0, count: 200 }]) expect(everything(await f.call(client, 'terminal_read', read))).not.toContain(`late-${nonce}`);
    expect(everything(await f.call(client, 'terminal_wait', { id, waitMs: 1_000 }))).not.toContain(`late-${nonce}`);
    g.dispose();
  });

  it.runIf(runs("the person's processes, read from /proc", procfs))(
    'a job from a takeover that had not ended when the person took the terminal again stays theirs (round s44)',
    async () => {
      const nonce = String(Math.floor(Math.random() * 1e9));
      const { id } = (await f.call(client, 'terminal_open', { title: 'twice', shell: 'bash' })) as { id: string };
      await f.call(client, 'terminal_send', { id, text: 'true' });
      const view = await attachAsPerson(id);
      const g = gate(f.project);
      await personRuns(id, view, `(until [ -e ${g.path} ]; do sleep 0.05; done; printf 'late-%s\\n' ${nonce}) &`);
      f.host.handBack(id);
      f.host.takeControl(id);
      await personRuns(id, view, 'true');
      f.host.handBack(id);
      expect(await f.call(client, 'terminal_send', { id, text: 'echo mine-1', waitMs: 10_000 })).toMatchObject({ status: 'done' });
      g.open();
      await until(() => f.host.get(id).session.screen.text.includes(`late-${nonce}`), "the person's late output");
      expect(everything(await f.call(client, 'terminal_send', { id, text: 'echo mine-2', waitMs: 10_000 }))).not.toContain(`late-${nonce}`);
      expect(everything(await f.call(client, 'terminal_read', { id, offset: 0, count: 200 }))).not.toContain(`late-${nonce}`);
      g.dispose();
    },
  );

  it.runIf(runs("the person's processes, read from /proc", procfs))(
    "lines the person types fast into a REPL are the REPL's: the agent's next command after the hand-back is its own (round s44)",
    async () => {
      const { id } = (await f.call(client, 'terminal_open', { title: 'repl', shell: 'bash' })) as { id: string };
      await f.call(client, 'terminal_send', { id, text: 'true' });
      const view = await attachAsPerson(id);
      await f.host.input(view, 'python3 -q\r', true);
      await until(() => f.host.get(id).session.screen.text.includes('>>>'), 'the REPL');
      for (let i = 1; i <= 6; i++) await f.host.input(view, `${i}+${i}\r`, true);
      await until(() => f.host.get(id).session.screen.text.includes('12'), 'the REPL answering');
      await f.host.input(view, 'exit()\r', true);
      await until(() => f.host.get(id).view().lastCommand?.command === 'python3 -q' && f.host.get(id).ops.status === 'idle', 'the REPL ended');
      f.host.handBack(id);
      expect(await f.call(client, 'terminal_send', { id, text: 'echo mine-$((5*5))', waitMs: 10_000 })).toMatchObject({ status: 'done', output: 'mine-25' });
    },
  );

  it.each(['bash', 'zsh'])("%s: text the person left at the prompt is not completed or run by the agent's next line (round s44)", async (shell) => {
    const nonce = String(Math.floor(Math.random() * 1e9));
    const { id } = (await f.call(client, 'terminal_open', { title: 'left', shell })) as { id: string };
    await f.call(client, 'terminal_send', { id, text: 'true' });
    const view = await attachAsPerson(id);
    await personRuns(id, view, 'echo hi');
    await f.host.input(view, `printf 'left-%s\\n' ${nonce} #`, true);
    await until(() => f.host.get(id).session.screen.text.includes(`left-%s`), 'the typed text');
    f.host.handBack(id);
    const mine = await f.call(client, 'terminal_send', { id, text: 'echo mine-$((2*21))', waitMs: 10_000 });
    expect(mine).toMatchObject({ status: 'done', output: 'mine-42' });
    await until(() => f.host.get(id).ops.status === 'idle', 'the prompt');
    expect(f.host.get(id).session.screen.text).not.toContain(`left-${nonce}\n`);
    expect(everything(await f.call(client, 'terminal_read', { id, offset: 0, count: 200 }))).not.toContain(`left-${nonce}`);
  });

  it('sharing a later lease never shows an earlier private one, still open when the person took the terminal again (round s42 N1)', async () => {
    const nonce = String(Math.floor(Math.random() * 1e9));
    const { id } = (await f.call(client, 'terminal_open', { title: 'retake', shell: 'bash' })) as { id: string };
    const before = (await f.call(client, 'terminal_send', { id, text: 'true' })).cursor as string;
    const view = await attachAsPerson(id);
    const g = gate(f.project);
    await f.host.input(view, `printf 'first-%s\\n' ${nonce}; until [ -e ${g.path} ]; do sleep 0.05; done\r`, true);
    await until(() => f.host.get(id).session.screen.text.includes(`first-${nonce}`), 'the first output');
    f.host.handBack(id);
    // Still running: the person takes it again, stops it and shares this time.
    f.host.takeControl(id);
    g.open();
    await until(() => f.host.get(id).ops.status === 'idle', 'the prompt');
    await personRuns(id, view, `printf 'second-%s\\n' ${nonce}`);
    f.host.handBack(id, { shareOutput: true });
    for (const read of [{ id }, { id, since: before }, { id, offset: 0, count: 200 }]) {
      const text = everything(await f.call(client, 'terminal_read', read));
      expect(text, JSON.stringify(read)).not.toContain(`first-${nonce}`);
      expect(text, JSON.stringify(read)).toContain(`second-${nonce}`);
    }
    g.dispose();
  });

  it.runIf(runs("the person's jobs, read from /proc", procfs))(
    "the person's jobs stay theirs until they are gone: stopped before the hand-back, or in the background (round s42 N2-N4)",
    async () => {
      const nonce = String(Math.floor(Math.random() * 1e9));
      const file = join(f.project, `jobs-${nonce}.txt`);
      writeFileSync(file, Array.from({ length: 10 }, (_, i) => `line ${i} stopped-${nonce}`).join('\n'));
      const { id } = (await f.call(client, 'terminal_open', { title: 'jobs', shell: 'bash' })) as { id: string };
      await f.call(client, 'terminal_send', { id, text: 'true' });
      const view = await attachAsPerson(id);
      // The person stops their pager, then hands back at the prompt.
      await f.host.input(view, `less ${file}\r`, true);
      await until(() => f.host.get(id).session.screen.text.includes(`stopped-${nonce}`), 'the pager');
      await f.host.input(view, '\x1a', true);
      await until(() => f.host.get(id).ops.status === 'idle', 'the prompt after Ctrl+Z');
      f.host.handBack(id);
      // The agent runs something else first, then brings the pager back and quits it.
      for (const step of [{ text: 'true' }, { text: 'fg' }, { keys: ['q'], input: true }]) {
        const result = await f.call(client, 'terminal_send', { id, ...step, waitMs: 5_000 });
        expect(everything(result), JSON.stringify(step)).not.toContain(`stopped-${nonce}`);
        expect(everything(await f.call(client, 'terminal_read', { id }))).not.toContain(`stopped-${nonce}`);
      }
      // A background job of the person's prints after the hand-back.
      const g = gate(f.project);
      f.host.takeControl(id);
      await personRuns(id, view, `(until [ -e ${g.path} ]; do sleep 0.05; done; printf 'bg-%s\\n' ${nonce}) &`);
      f.host.handBack(id);
      g.open();
      await until(() => f.host.get(id).session.screen.text.includes(`bg-${nonce}`), 'the background output');
      const after = await f.call(client, 'terminal_send', { id, text: 'echo mine-$((5+5))', waitMs: 10_000 });
      expect(everything(after)).not.toContain(`bg-${nonce}`);
      expect(everything(await f.call(client, 'terminal_read', { id, offset: 0, count: 400 }))).not.toContain(`bg-${nonce}`);
      expect(await f.call(client, 'terminal_send', { id, text: 'echo mine-$((6+6))', waitMs: 10_000 })).toMatchObject({ status: 'done', output: 'mine-12' });
      g.dispose();
    },
  );
});
