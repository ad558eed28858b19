import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/until.js';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';
import { file, runs } from '../support/capabilities.js';
import { findPwsh } from './pwsh-helpers.js';
import { startRuntime } from '../../src/main/runtime.js';
import { knownStateDirs } from '../../src/main/state-dir.js';

let f: AgentFixture;
let token: string;
/** Paired from the UI side with the default policy (ask unless allow-listed). */
let guardedToken: string;
/** The person's global git config, where the judge (which reads only the repository's) does not look. */
const globalGitConfig = join(mkdtempSync(join(tmpdir(), 'tandem-gitconfig-')), 'gitconfig');
beforeAll(async () => {
  // What holds without the sandbox (an agent the person runs with `sandbox: off`);
  // tests/integration/sandbox.test.ts covers confined terminals.
  f = await startAgentFixture({ defaultSandbox: 'off', env: { GIT_CONFIG_GLOBAL: globalGitConfig } });
  // Agent terminals inherit only allow-listed names: the person lets this one through.
  f.host.settings.update({ agentEnvAllow: ['GIT_CONFIG_GLOBAL'] });
  token = f.layer.pairAgent({ name: 'hardening' }).token;
  f.layer.setAgentPolicy({ name: 'hardening', policy: 'always' });
  guardedToken = f.layer.pairAgent({ name: 'guarded' }).token;
});
afterAll(async () => {
  await f.close();
});
afterEach(async () => {
  await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
});

/** Alive and not a zombie (orphans become zombies of pid 1, which reaps when it likes). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Sends as the agent; when the line waits for the person, the person approves it as shown. */
async function sendApproving(fixture: AgentFixture, client: Client, id: string, text: string): Promise<Record<string, unknown>> {
  const sent = fixture.call(client, 'terminal_send', { id, text, waitMs: 15_000 });
  let asked = false;
  const approve = setInterval(() => {
    const request = fixture.layer.state().approvals.find((approval) => approval.terminalId === id);
    if (!request) return;
    asked = true;
    fixture.layer.answerApproval({ requestId: request.id, decision: 'approve' });
  }, 20);
  try {
    return { ...(await sent), asked };
  } finally {
    clearInterval(approve);
  }
}

describe('output that looks like a marker (class 6)', () => {
  it.each(['bash', 'zsh'])('%s: an unfinished private-marker prefix printed by a program swallows no marker', async (shell) => {
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'markers', shell })) as { id: string };
    const printed = await f.call(client, 'terminal_send', { id, text: "printf 'x\\033]7771;'", waitMs: 10_000 });
    expect(printed).toMatchObject({ status: 'done', evidence: 'marker', exitCode: 0 });
    expect(await f.call(client, 'terminal_send', { id, text: "printf '\\033]7771;junk;E;99;0;;/'; false", waitMs: 10_000 })).toMatchObject({
      status: 'done',
      evidence: 'marker',
      exitCode: 1,
    });
    expect(await f.call(client, 'terminal_send', { id, text: 'echo next', waitMs: 10_000 })).toMatchObject({ status: 'done', exitCode: 0, output: 'next' });
  });
});

describe("the emulator's answers to terminal questions (black-box round 13)", () => {
  // A DECRQSS question: Tandem's emulator answers ESC P 1 $ r ... ESC \, whose ESC P readline takes
  // for M-p, a history search; the agent's next allowed keys then edited a recalled line of its
  // own planting, and an `input` send broke its quoting: the planted payload ran unasked.
  const query = "'\\eP$qr\\e\\\\'";
  async function attack(client: Client, id: string, canary: string, ask: (text: string) => Promise<unknown>): Promise<void> {
    const plant = `echo 'AAA echo y"; touch ${canary}; #'`;
    expect(await f.call(client, 'terminal_send', { id, text: plant, waitMs: 10_000 })).toMatchObject({ status: 'done' });
    await ask(`echo -e ${query}`);
    // The line editor took nothing of the answer: the next allowed line runs as a line.
    expect(await f.call(client, 'terminal_send', { id, text: 'echo y', waitMs: 10_000 })).toMatchObject({ status: 'done', output: 'y' });
    await f.call(client, 'terminal_send', { id, text: `echo "'"`, input: true, waitMs: 3000 });
    expect(await f.call(client, 'terminal_send', { id, text: 'echo after', waitMs: 10_000 })).toMatchObject({ status: 'done', output: 'after' });
    expect(existsSync(canary)).toBe(false);
  }

  it.each(['bash', 'zsh'])('%s: an answer that comes at the prompt is not typed into the line editor', async (shell) => {
    const dir = mkdtempSync(join(f.project, 'tandem-answer-'));
    const client = await f.client(guardedToken);
    const { id } = (await f.call(client, 'terminal_open', { title: 'answers', shell, cwd: dir })) as { id: string };
    await attack(client, id, join(dir, 'canary'), async (text) =>
      expect(await f.call(client, 'terminal_send', { id, text, waitMs: 10_000 })).toMatchObject({ status: 'done', approval: null }),
    );
    // find prints it as an allowed line too.
    await attack(client, id, join(dir, 'canary2'), async () =>
      expect(await f.call(client, 'terminal_send', { id, text: "find . -maxdepth 0 -printf '\\033P$qr\\033\\\\'", waitMs: 10_000 })).toMatchObject({
        status: 'done',
        approval: null,
      }),
    );
  });

  it.each(['bash', 'zsh'])('%s: answers to a flood of questions a program never reads are bounded (black-box round 14)', async (shell) => {
    const dir = mkdtempSync(join(f.project, 'tandem-answers-'));
    for (let i = 0; i < 200; i++) writeFileSync(join(dir, `f${i}`), '');
    const client = await f.client(guardedToken);
    const { id } = (await f.call(client, 'terminal_open', { title: 'answers', shell, cwd: dir })) as { id: string };
    // 250 DECRQSS questions a file: about 650 KB of answers find never reads, past what the drain empties.
    const flood = `find . -printf '${'\\033P$qr\\033\\\\'.repeat(250)}|\\n'`;
    await attack(client, id, join(dir, 'canary'), async () =>
      expect(await f.call(client, 'terminal_send', { id, text: flood, waitMs: 30_000 })).toMatchObject({ status: 'done', approval: null }),
    );
  });

  it.each(['bash', 'zsh'])('%s: an answer a program left unread is emptied at the next prompt', async (shell) => {
    const dir = mkdtempSync(join(f.project, 'tandem-answer-'));
    const client = await f.client(guardedToken);
    const { id } = (await f.call(client, 'terminal_open', { title: 'answers', shell, cwd: dir })) as { id: string };
    // The answer is written while sleep runs (it never reads it), so it waits in the terminal.
    await attack(client, id, join(dir, 'canary'), async (text) =>
      expect(await sendApproving(f, client, id, `${text}; sleep 1`)).toMatchObject({ status: 'done', asked: true }),
    );
  });
});

describe('input racing the end of its command', () => {
  // The host reads the shell's output late (a flood, a loaded machine): it still thinks the
  // command runs when the shell is back at its prompt. Input for the program written then was
  // a line for the line editor, which ran it unjudged once the prompt's drain was over. The
  // PTY's output is held back here to make that lag certain. (The judge asks for input while the
  // shell is in front; the write comes later than its look, so an agent that may run anything
  // shows the write itself: a line that runs at the prompt leaves its canary.)
  it.each(['bash', 'zsh'])('%s: input for a program that ended before it went is refused and never runs', async (shell) => {
    const dir = mkdtempSync(join(f.project, 'tandem-race-'));
    const canary = join(dir, 'canary');
    const client = await f.client(token);
    const { id } = (await f.call(client, 'terminal_open', { title: 'race', shell, cwd: dir })) as { id: string };
    const session = f.host.get(id).session;
    const pty = (session as unknown as { pty: { pause(): void; resume(): void } }).pty;
    const sleeping = f.call(client, 'terminal_send', { id, text: 'sleep 0.3', waitMs: 0 });
    expect(await sleeping).toMatchObject({ status: 'running' });
    await until(() => session.screen.text.includes('sleep 0.3'), 'sleep to be typed');
    pty.pause();
    // sleep ended and the shell took the terminal back; the host has read none of it.
    const stat = () =>
      readFileSync(`/proc/${session.pid}/stat`, 'utf8')
        .replace(/^.*\) /, '')
        .split(' ');
    await until(
      () => readFileSync(`/proc/${session.pid}/task/${session.pid}/children`, 'utf8').trim() === '' && stat()[5] === stat()[2],
      'the shell back in front',
    );
    const typed = f.call(client, 'terminal_send', { id, text: `touch ${canary}`, input: true, waitMs: 5000 });
    setTimeout(() => pty.resume(), 300);
    expect(await typed).toMatchObject({ isError: true, error: { code: 'busy' } });
    expect(await f.call(client, 'terminal_send', { id, text: 'echo next', waitMs: 10_000 })).toMatchObject({ status: 'done', output: 'next' });
    expect(existsSync(canary)).toBe(false);
  });
});

describe('input typed ahead to a program that does not read (black-box round 15)', () => {
  // Typeahead to a program that is not reading is not judged until what submits it: the
  // prompt's drain empties what the program leaves. 3.5 MB queued behind a grep outlasted bash's
  // drain, and the touch lines in it ran at the prompt.
  it.each(['bash', 'zsh'])('%s: what waits unread is bounded, and all of it is emptied at the prompt', async (shell) => {
    const dir = mkdtempSync(join(f.project, 'tandem-typeahead-'));
    const canary = join(dir, 'canary');
    const client = await f.client(guardedToken);
    const { id } = (await f.call(client, 'terminal_open', { title: 'typeahead', shell, cwd: dir })) as { id: string };
    const started = f.call(client, 'terminal_send', { id, text: 'sleep 3', waitMs: 1000 });
    await until(() => f.layer.state().approvals.some((a) => a.terminalId === id), 'the approval of sleep');
    f.layer.answerApproval({ requestId: f.layer.state().approvals.find((a) => a.terminalId === id)!.id, decision: 'approve' });
    expect(await started).toMatchObject({ status: 'running' });
    const chunk = `${'😀'.repeat(200)}\ntouch ${canary}\n`.repeat(60);
    let refused: Record<string, unknown> | null = null;
    for (let i = 0; i < 8 && !refused; i++) {
      const typed = await f.call(client, 'terminal_send', { id, text: chunk, input: true, submit: false, waitMs: 0 });
      if (typed.isError) refused = typed;
      else expect(typed).toMatchObject({ approval: null });
    }
    expect(refused).toMatchObject({ error: { code: 'input_too_large' } });
    expect(await f.call(client, 'terminal_wait', { id, waitMs: 20_000 })).toMatchObject({ status: 'done' });
    expect(await f.call(client, 'terminal_send', { id, text: 'echo next', waitMs: 10_000 })).toMatchObject({ status: 'done', output: 'next' });
    expect(existsSync(canary)).toBe(false);
  });
});

describe('text typed without submitting (black-box round 16)', () => {
  // A trailing newline is not typed, but the line kept it: the next unsubmitted text was typed
  // again after it, as a paste of two lines (zsh: a buffer the clear keys empty only the last
  // line of; sh: the newline an Enter), and never judged as the two lines it made.
  it.each(['bash', 'zsh', 'sh'])('%s: a trailing newline joins no later text into a line that runs unjudged', async (shell) => {
    const dir = mkdtempSync(join(f.project, 'tandem-typed-'));
    const canary = join(dir, 'canary');
    const client = await f.client(guardedToken);
    const { id } = (await f.call(client, 'terminal_open', { title: 'typed', shell, cwd: dir })) as { id: string };
    for (const text of [`touch ${canary}\n`, 'x']) {
      expect(await f.call(client, 'terminal_send', { id, text, submit: false, waitMs: 1000 })).toMatchObject({ approval: null });
    }
    await f.call(client, 'terminal_signal', { id, signal: 'SIGTERM' });
    expect(await f.call(client, 'terminal_send', { id, text: 'echo hi', waitMs: 10_000 })).toMatchObject({ status: 'done', output: 'hi' });
    expect(existsSync(canary)).toBe(false);
    expect(f.layer.state().approvals.filter((a) => a.terminalId === id)).toEqual([]);
  });
});

describe('output whose counts would loop the emulator (black-box round 17)', () => {
  // xterm.js scrolls, repeats and tabs once per unit of the count it is given: one allowed
  // 14-byte scroll kept the host's main thread (every terminal, approval and agent) for hours.
  it.each(['bash', 'zsh'])('%s: a scroll or repeat of 2^31 - 1 is carried out bounded, and the host answers', async (shell) => {
    const dir = mkdtempSync(join(f.project, 'tandem-loop-'));
    const client = await f.client(guardedToken);
    const { id } = (await f.call(client, 'terminal_open', { title: 'loop', shell, cwd: dir })) as { id: string };
    for (const sequence of ['\\033[2147483647S', 'a\\033[2147483647b', '\\033[2147483647L\\033[2147483647Z']) {
      expect(await f.call(client, 'terminal_send', { id, text: `find . -maxdepth 0 -printf '${sequence}'`, waitMs: 20_000 })).toMatchObject({
        status: 'done',
        approval: null,
      });
    }
    expect(await f.call(client, 'terminal_send', { id, text: 'echo after', waitMs: 20_000 })).toMatchObject({ status: 'done', output: 'after' });
    expect(f.host.list().length).toBeGreaterThan(0);
  });
});

describe('agent terminals neutralise hooks', () => {
  function hostileRepo(): { dir: string; canary: (what: string) => string } {
    const dir = mkdtempSync(join(f.project, 'tandem-hostile-'));
    const canary = (what: string) => join(dir, `canary-${what}`);
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
    git('init', '-q');
    writeFileSync(join(dir, 'f.txt'), 'one\n');
    git('add', 'f.txt');
    git('-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-qm', 'init');
    writeFileSync(join(dir, 'f.txt'), 'one\ntwo\n');
    // Hooks in the global config: the repository's own config would make the judge ask instead.
    const hostile = (key: string, value: string) => execFileSync('git', ['config', '--file', globalGitConfig, key, value]);
    hostile('core.fsmonitor', `touch ${canary('fsmonitor')}; false`);
    hostile('core.pager', `touch ${canary('pager')}; cat`);
    hostile('pager.status', `touch ${canary('pager-status')}; cat`);
    return { dir, canary };
  }

  it.each(['bash', 'zsh'])('%s: an allowed git status and git diff run no fsmonitor or pager from the git config', async (shell) => {
    const repo = hostileRepo();
    const client = await f.client(guardedToken);
    const { id } = (await f.call(client, 'terminal_open', { title: 'hostile repo', shell, cwd: repo.dir })) as { id: string };
    const status = await f.call(client, 'terminal_send', { id, text: 'git status', waitMs: 15_000 });
    expect(status).toMatchObject({ status: 'done', exitCode: 0, approval: null });
    expect(status.output).toContain('f.txt');
    const diff = await f.call(client, 'terminal_send', { id, text: 'git diff', waitMs: 15_000 });
    expect(diff).toMatchObject({ status: 'done', exitCode: 0, approval: null });
    expect(diff.output).toContain('+two');
    for (const what of ['fsmonitor', 'pager', 'pager-status']) expect(existsSync(repo.canary(what)), what).toBe(false);
    // The same repository does run them outside Tandem's agent terminals: the canaries are real.
    execFileSync('sh', ['-c', 'git status >/dev/null 2>&1; true'], { cwd: repo.dir, env: { ...process.env, GIT_CONFIG_GLOBAL: globalGitConfig } });
    expect(existsSync(repo.canary('fsmonitor'))).toBe(true);
  });

  it.each([
    ['bash', 'echo safe # ; touch CANARY', 'ls !-1:3-5'],
    ['zsh', "echo 'safe; touch CANARY'", 'ls !-1:1:Q'],
  ])('%s: history expansion is off, so an approved harmless line cannot be replayed into another command', async (shell, first, replay) => {
    const dir = mkdtempSync(join(f.project, 'tandem-history-'));
    const canary = join(dir, 'canary');
    const client = await f.client(guardedToken);
    const { id } = (await f.call(client, 'terminal_open', { title: 'history', shell, cwd: dir })) as { id: string };
    expect(await sendApproving(f, client, id, first.replace('CANARY', canary))).toMatchObject({ status: 'done', exitCode: 0 });
    const replayed = await sendApproving(f, client, id, replay);
    expect(replayed).toMatchObject({ status: 'done' });
    expect(existsSync(canary)).toBe(false);
  });
});

describe("an unconfined terminal's workspace is the folder decided at open", () => {
  it('a hostile process replacing that folder with a link to the home later widens nothing: the read asks and returns no secret', async () => {
    const nonce = String(Math.floor(Math.random() * 1e9));
    const secretDir = mkdtempSync(join(f.home, 'tandem-notes-'));
    writeFileSync(join(secretDir, 'private.txt'), `secret-${nonce}\n`);
    const ws = mkdtempSync(join(f.project, 'tandem-ws-'));
    writeFileSync(join(ws, 'readme.txt'), 'inside\n');
    const client = await f.client(guardedToken);
    const { id } = (await f.call(client, 'terminal_open', { title: 'swapped', shell: 'bash', cwd: ws })) as { id: string };
    // Inside the workspace an allow-listed read runs without asking.
    expect(await f.call(client, 'terminal_send', { id, text: `cat ${ws}/readme.txt`, waitMs: 10_000 })).toMatchObject({
      status: 'done',
      approval: null,
      output: 'inside',
    });
    // Another local process swaps the folder for a link to the person's home.
    renameSync(ws, `${ws}.moved`);
    symlinkSync(f.home, ws);
    const read = `cat ${ws}/${basename(secretDir)}/private.txt`;
    const asked = await f.call(client, 'terminal_send', { id, text: read, waitMs: 300 });
    expect(asked).toMatchObject({ status: 'awaiting_approval' });
    expect(JSON.stringify(asked)).not.toContain(`secret-${nonce}`);
    const request = f.layer.state().approvals.find((approval) => approval.terminalId === id);
    expect(request?.why).toContain("outside the terminal's workspace");
    f.layer.answerApproval({ requestId: request!.id, decision: 'reject', reason: 'no' });
    const after = await f.call(client, 'terminal_read', { id });
    expect(JSON.stringify(after)).not.toContain(`secret-${nonce}`);
  });
});

describe("Tandem's default state directory", () => {
  it("is protected though this instance keeps its state elsewhere: another instance's tokens and recordings ask", async () => {
    const other = join(f.home, '.config', 'Tandem');
    mkdirSync(join(other, 'recordings'), { recursive: true });
    writeFileSync(join(other, 'agents.json'), '{"agents":[]}\n');
    const client = await f.client(guardedToken);
    // The person lets the terminal open in their home (its workspace question).
    const opening = f.call(client, 'terminal_open', { title: 'home', shell: 'bash', cwd: f.home });
    await until(() => f.layer.state().approvals.some((approval) => approval.kind === 'open'), 'the workspace question');
    f.layer.answerApproval({ requestId: f.layer.state().approvals.find((approval) => approval.kind === 'open')!.id, decision: 'approve' });
    const { id } = (await opening) as { id: string };
    for (const text of ['cat .config/Tandem/agents.json', 'ls .config/Tandem/recordings']) {
      const asked = await f.call(client, 'terminal_send', { id, text, waitMs: 300 });
      expect(asked, text).toMatchObject({ status: 'awaiting_approval' });
      const request = f.layer.state().approvals.find((approval) => approval.terminalId === id);
      expect(request?.why).toContain('protected location');
      f.layer.answerApproval({ requestId: request!.id, decision: 'reject', reason: 'no' });
    }
  });
});

describe("another instance's state directory elsewhere (its own TANDEM_HOME)", () => {
  it('is protected once that instance has started: its tokens ask and are not returned', async () => {
    const nonce = String(Math.floor(Math.random() * 1e9));
    const other = join(f.home, 'work', `tandem-b-${nonce}`);
    const env: NodeJS.ProcessEnv = { ...process.env, TANDEM_HOME: other, HOME: f.home, SHELL: '/bin/bash' };
    delete env.TANDEM_INSTANCE;
    delete env.XDG_CONFIG_HOME;
    const running = await startRuntime({
      env,
      port: 0,
      allowOrigins: [],
      trustLocalAgents: false,
      rendererDir: null,
      machines: false,
      bridge: { command: process.execPath, args: [] },
    });
    try {
      writeFileSync(join(other, 'agents.json'), `{"agents":[{"token":"tok-${nonce}"}]}\n`);
      const client = await f.client(guardedToken);
      const opening = f.call(client, 'terminal_open', { title: 'home-b', shell: 'bash', cwd: f.home });
      await until(() => f.layer.state().approvals.some((approval) => approval.kind === 'open'), 'the workspace question');
      f.layer.answerApproval({ requestId: f.layer.state().approvals.find((approval) => approval.kind === 'open')!.id, decision: 'approve' });
      const { id } = (await opening) as { id: string };
      for (const text of [`cat work/tandem-b-${nonce}/agents.json`, `grep -r tok- work`]) {
        const asked = await f.call(client, 'terminal_send', { id, text, waitMs: 300 });
        expect(asked, text).toMatchObject({ status: 'awaiting_approval' });
        const request = f.layer.state().approvals.find((approval) => approval.terminalId === id);
        expect(request?.why).toContain('protected location');
        f.layer.answerApproval({ requestId: request!.id, decision: 'reject', reason: 'no' });
      }
      expect(JSON.stringify(await f.call(client, 'terminal_read', { id }))).not.toContain(`tok-${nonce}`);
    } finally {
      await running.stop();
    }
    // Gone: its entry goes with it.
    rmSync(other, { recursive: true, force: true });
    expect(knownStateDirs(f.home)).not.toContain(other);
  });
});

describe('.. after a link inside the workspace', () => {
  it("is its target's parent, as the kernel walks it: reads there ask and return nothing", async () => {
    const nonce = String(Math.floor(Math.random() * 1e9));
    const secretDir = mkdtempSync(join(f.home, 'tandem-notes-'));
    writeFileSync(join(secretDir, 'private.txt'), `KEY=secret-${nonce}\n`);
    const ws = mkdtempSync(join(f.project, 'tandem-dotdot-'));
    writeFileSync(join(ws, 'readme.txt'), 'inside\n');
    // A link to a folder outside, as `npm link` or a committed symlink makes one.
    mkdirSync(join(f.home, 'linked-lib'), { recursive: true });
    symlinkSync(join(f.home, 'linked-lib'), join(ws, 'd'));
    const client = await f.client(guardedToken);
    const { id } = (await f.call(client, 'terminal_open', { title: 'dotdot', shell: 'bash', cwd: ws })) as { id: string };
    expect(await f.call(client, 'terminal_send', { id, text: 'cat readme.txt', waitMs: 10_000 })).toMatchObject({ status: 'done', approval: null });
    for (const text of [
      `cat d/../${basename(secretDir)}/private.txt`,
      'grep -rn KEY d/..',
      `head -q ./d/../${basename(secretDir)}/private.txt`,
      'cat d/../nothing-yet/../x',
    ]) {
      const asked = await f.call(client, 'terminal_send', { id, text, waitMs: 300 });
      expect(asked, text).toMatchObject({ status: 'awaiting_approval' });
      const request = f.layer.state().approvals.find((approval) => approval.terminalId === id);
      f.layer.answerApproval({ requestId: request!.id, decision: 'reject', reason: 'no' });
    }
    expect(JSON.stringify(await f.call(client, 'terminal_read', { id }))).not.toContain(`secret-${nonce}`);
  });
});

describe('what could redirect a program (aliases, functions, PATH)', () => {
  it.each(['bash', 'zsh'])('%s: after an approved alias, an allow-listed ls asks, and nothing ran', async (shell) => {
    const dir = mkdtempSync(join(f.project, 'tandem-alias-'));
    const canary = join(dir, 'canary');
    const client = await f.client(guardedToken);
    const { id } = (await f.call(client, 'terminal_open', { title: 'alias', shell, cwd: dir })) as { id: string };
    expect(await f.call(client, 'terminal_send', { id, text: 'ls' })).toMatchObject({ status: 'done', approval: null });
    expect(await sendApproving(f, client, id, `alias ls='touch ${canary}'`)).toMatchObject({ status: 'done', asked: true });
    const asked = await f.call(client, 'terminal_send', { id, text: 'ls', waitMs: 300 });
    expect(asked).toMatchObject({ status: 'awaiting_approval' });
    expect(existsSync(canary)).toBe(false);
    const [request] = f.layer.state().approvals.filter((approval) => approval.terminalId === id);
    f.layer.answerApproval({ requestId: request!.id, decision: 'reject', reason: 'no' });
    expect(existsSync(canary)).toBe(false);

    // A function of that name, and a PATH changed by an approved command, ask too.
    expect(await sendApproving(f, client, id, 'unalias ls; cat() { touch "$1"; }')).toMatchObject({ status: 'done' });
    expect(await f.call(client, 'terminal_send', { id, text: 'ls' })).toMatchObject({ status: 'done', approval: null });
    expect(await f.call(client, 'terminal_send', { id, text: `cat ${canary}`, waitMs: 300 })).toMatchObject({ status: 'awaiting_approval' });
    f.layer.answerApproval({ requestId: f.layer.state().approvals.find((approval) => approval.terminalId === id)!.id, decision: 'reject' });
    expect(await sendApproving(f, client, id, `unset -f cat; PATH=${dir}:$PATH`)).toMatchObject({ status: 'done' });
    expect(await f.call(client, 'terminal_send', { id, text: 'pwd', waitMs: 300 })).toMatchObject({ status: 'awaiting_approval' });
    f.layer.answerApproval({ requestId: f.layer.state().approvals.find((approval) => approval.terminalId === id)!.id, decision: 'reject' });
    expect(existsSync(canary)).toBe(false);
  });

  // bash only: zsh's table is not reported (README, Known limitations).
  it.each([['bash', (script: string) => `hash -p ${script} ls`]])(
    '%s: after an approved hash entry, an allow-listed ls asks, and nothing ran',
    async (shell, hash) => {
      const dir = mkdtempSync(join(f.project, 'tandem-hash-'));
      const canary = join(dir, 'canary');
      const script = join(dir, 'not-ls');
      writeFileSync(script, `#!/bin/sh\ntouch ${canary}\n`, { mode: 0o755 });
      const client = await f.client(guardedToken);
      const { id } = (await f.call(client, 'terminal_open', { title: 'hash', shell, cwd: dir })) as { id: string };
      // Hashed by running it: the entry a PATH search made does not ask.
      expect(await f.call(client, 'terminal_send', { id, text: 'ls' })).toMatchObject({ status: 'done', approval: null });
      expect(await f.call(client, 'terminal_send', { id, text: 'ls' })).toMatchObject({ status: 'done', approval: null });
      expect(await sendApproving(f, client, id, hash(script))).toMatchObject({ status: 'done', asked: true });
      const asked = await f.call(client, 'terminal_send', { id, text: 'ls', waitMs: 300 });
      expect(asked).toMatchObject({ status: 'awaiting_approval' });
      const [request] = f.layer.state().approvals.filter((approval) => approval.terminalId === id);
      expect(request?.why).toContain(`hashed to ${script}`);
      f.layer.answerApproval({ requestId: request!.id, decision: 'reject', reason: 'no' });
      expect(existsSync(canary)).toBe(false);
      // Cleared, it runs without asking again.
      expect(await sendApproving(f, client, id, 'hash -r')).toMatchObject({ status: 'done' });
      expect(await f.call(client, 'terminal_send', { id, text: 'ls' })).toMatchObject({ status: 'done', approval: null });
      expect(existsSync(canary)).toBe(false);
    },
  );

  // Debian's bash-builtins package (.ci/run installs it) has loadables of allow-listed names.
  it.runIf(runs('bash: a builtin loaded by enable -f', file('/usr/lib/bash/head', 'Debian package bash-builtins')))(
    'bash: after an approved enable -f, head asks (enable -f can replace a builtin in place, so it holds the terminal; skipped without /usr/lib/bash/head, Debian package bash-builtins)',
    async () => {
      const dir = mkdtempSync(join(f.project, 'tandem-enable-'));
      writeFileSync(join(dir, 'f.txt'), 'one\n');
      const client = await f.client(guardedToken);
      const { id } = (await f.call(client, 'terminal_open', { title: 'enable', shell: 'bash', cwd: dir })) as { id: string };
      expect(await f.call(client, 'terminal_send', { id, text: 'head f.txt' })).toMatchObject({ status: 'done', output: 'one', approval: null });
      expect(await sendApproving(f, client, id, 'enable -f /usr/lib/bash/head head')).toMatchObject({ status: 'done', exitCode: 0 });
      expect(await f.call(client, 'terminal_send', { id, text: 'head f.txt', waitMs: 300 })).toMatchObject({ status: 'awaiting_approval' });
      const [request] = f.layer.state().approvals.filter((approval) => approval.terminalId === id);
      expect(request?.why).toContain('runs "enable"');
      // The report still lists the loaded builtin.
      expect(f.host.get(id).session.redirects?.builtins.has('head')).toBe(true);
      f.layer.answerApproval({ requestId: request!.id, decision: 'reject', reason: 'no' });
    },
  );

  it.runIf(findPwsh() !== null)('pwsh: an alias an approved line set is reported', async () => {
    const client = await f.client(guardedToken);
    const { id } = (await f.call(client, 'terminal_open', { title: 'pwsh alias', shell: findPwsh()! })) as { id: string };
    expect(await sendApproving(f, client, id, 'Set-Alias cat Remove-Item')).toMatchObject({ status: 'done' });
    await expect.poll(() => f.host.get(id).session.redirects?.aliases.get('cat')).toBe('Remove-Item');
  });

  it('zsh: the builtins a module loaded are reported, and no others', async () => {
    const client = await f.client(guardedToken);
    const { id } = (await f.call(client, 'terminal_open', { title: 'zmodload', shell: 'zsh' })) as { id: string };
    expect(await sendApproving(f, client, id, 'zmodload zsh/files')).toMatchObject({ status: 'done', exitCode: 0 });
    const builtins = f.host.get(id).session.redirects?.builtins;
    for (const name of ['chmod', 'ln', 'mkdir', 'mv', 'rm']) expect(builtins?.has(name), `${name} in ${[...(builtins ?? [])].join(' ')}`).toBe(true);
    expect(builtins?.has('echo')).toBe(false);
  });
});

describe('Tandem owns TANDEM_TERMINAL_ID and TANDEM_INSTANCE', () => {
  it('an agent under always cannot override them, and teardown still finds a double-forked daemon', async () => {
    const client = await f.client(token);
    const opened = (await f.call(client, 'terminal_open', {
      title: 'forged id',
      env: { TANDEM_TERMINAL_ID: 'forged-id', TANDEM_INSTANCE: '/tmp/forged.json', KEEP_ME: 'yes' },
    })) as { id: string };
    const shown = await f.call(client, 'terminal_send', {
      id: opened.id,
      text: 'printf "%s|%s|%s" "$TANDEM_TERMINAL_ID" "${TANDEM_INSTANCE-unset}" "$KEEP_ME"',
    });
    expect(shown).toMatchObject({ status: 'done', output: `${opened.id}|unset|yes` });
    const daemon = await f.call(client, 'terminal_send', { id: opened.id, text: '(setsid sleep 300 >/dev/null 2>&1 & echo $!)' });
    const pid = Number(daemon.output);
    expect(pid).toBeGreaterThan(0);
    expect(await f.call(client, 'terminal_close', { id: opened.id })).toEqual({ closed: true, orphans: [] });
    expect(running(pid)).toBe(false);
  });
});

describe('credential scrub (by name and by value shape), and startup-file exports by allow list', () => {
  let g: AgentFixture;
  let gToken: string;
  let xdg: string;
  const canaries = {
    DATABASE_URL: 'postgres://app:CANARY-db@db.internal/app',
    ORDERS_DB: 'mysql://root:CANARY-orders@localhost/orders',
    DEPLOY_KEY: 'CANARY-deploy-key',
    AZURE_DEVOPS_PAT: 'CANARY-pat',
    SENTRY_DSN: 'https://CANARY-dsn@o1.ingest.sentry.io/1',
    SERVICE_AUTH_TOKEN: 'CANARY-auth-token',
    NOTIFY: 'https://hooks.slack.com/services/T0/B0/CANARY-slack',
    ALERTS: 'https://discord.com/api/webhooks/1/CANARY-discord',
  };
  beforeAll(async () => {
    // pwsh finds its profile under XDG_CONFIG_HOME (an allow-listed name): a folder of this suite's.
    xdg = mkdtempSync(join(tmpdir(), 'tandem-xdg-'));
    mkdirSync(join(xdg, 'powershell'));
    writeFileSync(join(xdg, 'powershell', 'Microsoft.PowerShell_profile.ps1'), profileExports);
    g = await startAgentFixture({
      env: { ...canaries, SSH_AUTH_SOCK: '/tmp/kept-agent.sock', XDG_CONFIG_HOME: xdg },
      agentStartupFiles: 'user',
      defaultSandbox: 'off',
    });
    // The person's startup files export more, after Tandem's spawn-time scrub: secrets under
    // names and in shapes no list knows, paths, and names the person lets through.
    // bash: a changed IFS must not change how the scrub splits names (found black-box).
    // Hooks the startup files install export later, at each prompt (direnv does).
    writeFileSync(join(g.home, '.bashrc'), `${startupExports}IFS=' '\nPROMPT_COMMAND='export HOOKED=sk_live_CANARY_hook'\n`);
    // zsh: a readonly export (a hardened system's TMOUT) must not abort the rc file.
    writeFileSync(
      join(g.home, '.zshrc'),
      `${startupExports}readonly TMOUT=900; export TMOUT\n__hooked() { export HOOKED=sk_live_CANARY_hook }\nprecmd_functions+=(__hooked)\n`,
    );
    g.host.settings.update({ agentEnvAllow: ['AWS_PROFILE'] });
    gToken = g.layer.pairAgent({ name: 'scrubbed' }).token;
    g.layer.setAgentPolicy({ name: 'scrubbed', policy: 'always' });
  });
  afterAll(async () => {
    await g.close();
    rmSync(xdg, { recursive: true, force: true });
  });
  afterEach(async () => {
    await Promise.all(g.host.list().map((t) => g.host.close(t.id)));
  });

  const startupExports = [
    "export LATE_URL='redis://:CANARY-late@cache:6379'",
    "export STRIPE_LIVE='sk_live_CANARY51Habc'",
    'export ACME_SIGNING=CANARYword',
    'export GOPATH="$HOME/CANARY-not-there"',
    'export MIXED_DIRS="$HOME:CANARY-relative"',
    'export JAVA_HOME="$HOME"',
    'export AWS_PROFILE=kept-by-person',
    'export LC_TIME=C',
    'export EDITOR=kept-editor',
    // A capability, not a secret, though its value is an existing path: the person's key agent.
    'export SSH_AUTH_SOCK="$HOME"',
    '',
  ].join('\n');
  const profileExports = [
    "$env:LATE_URL = 'redis://:CANARY-late@cache:6379'",
    "$env:STRIPE_LIVE = 'sk_live_CANARY51Habc'",
    "$env:ACME_SIGNING = 'CANARYword'",
    '$env:GOPATH = "$HOME/CANARY-not-there"',
    '$env:MIXED_DIRS = "$HOME:CANARY-relative"',
    '$env:JAVA_HOME = "$HOME"',
    "$env:AWS_PROFILE = 'kept-by-person'",
    "$env:LC_TIME = 'C'",
    "$env:EDITOR = 'kept-editor'",
    '$env:SSH_AUTH_SOCK = "$HOME"',
    "function global:prompt { $env:HOOKED = 'sk_live_CANARY_hook'; 'PS> ' }",
    '',
  ].join('\n');
  const pwsh = findPwsh();

  it.each(['bash', 'zsh', ...(pwsh ? [pwsh] : [])])(
    '%s: `env` in an agent terminal shows no canary secret, nor SSH_AUTH_SOCK (a key agent is a credential)',
    async (shell) => {
      const client = await g.client(gToken);
      const { id } = (await g.call(client, 'terminal_open', { title: 'env', shell })) as { id: string };
      const result = await g.call(client, 'terminal_send', { id, text: 'env', maxOutputBytes: 262_144 });
      expect(result).toMatchObject({ status: 'done', exitCode: 0, truncated: null });
      const output = result.output as string;
      expect(output).not.toContain('SSH_AUTH_SOCK');
      expect(output).toContain('GIT_PAGER=cat');
      expect(output).not.toContain('CANARY');
      // An existing absolute path, the allow list, LC_* and the person's additions stay.
      for (const kept of [`JAVA_HOME=${g.home}`, 'AWS_PROFILE=kept-by-person', 'LC_TIME=C', 'EDITOR=kept-editor'])
        expect(output.split(/\r?\n/)).toContain(kept);
    },
  );

  it.each(['bash', 'zsh'])('%s: the removed exports are gone from the shell too, not only from its children', async (shell) => {
    const client = await g.client(gToken);
    const { id } = (await g.call(client, 'terminal_open', { title: 'vars', shell })) as { id: string };
    const result = await g.call(client, 'terminal_send', { id, text: 'echo "[${STRIPE_LIVE-unset}] [${ACME_SIGNING-unset}] [${JAVA_HOME-unset}]"' });
    expect(result).toMatchObject({ status: 'done', output: `[unset] [unset] [${g.home}]` });
  });

  it.each(['bash', 'zsh', ...(pwsh ? [pwsh] : [])])("%s: the agent's own exports stay across prompts, though the prompt hooks' are scrubbed", async (shell) => {
    const client = await g.client(gToken);
    const { id } = (await g.call(client, 'terminal_open', { title: 'own', shell })) as { id: string };
    const isPwsh = shell === pwsh;
    await g.call(client, 'terminal_send', { id, text: isPwsh ? "$env:AGENT_CHOICE = 'production'" : 'export AGENT_CHOICE=production' });
    const result = await g.call(client, 'terminal_send', { id, text: 'sh -c \'echo "[$AGENT_CHOICE] [${HOOKED-unset}]"\'' });
    expect(result).toMatchObject({ status: 'done', output: '[production] [unset]' });
  });

  it("the person's own terminals keep every export of their startup files", async () => {
    const own = await g.host.create({ shell: 'bash', cwd: g.home });
    await until(() => g.host.get(own.id).view().status === 'idle', 'the prompt');
    g.host.get(own.id).session.write('echo "[$STRIPE_LIVE]"\r');
    await until(() => g.host.get(own.id).session.outputSince(0).includes('[sk_live_CANARY51Habc]'), 'the export');
  });
});
