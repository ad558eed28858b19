import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { TerminalHost } from '../../src/main/host/host.js';
import { resolveShell, which } from '../../src/main/shells/resolve.js';
import { type SessionOptions, TerminalSession } from '../../src/main/terminal/session/session.js';

/** A private HOME per test file, so the person's real startup files never leak into tests. */
export function makeHome(files: Record<string, string> = {}): { home: string; cleanup: () => void } {
  const home = mkdtempSync(join(tmpdir(), 'tandem-home-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(home, name), content);
  return { home, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

/** TANDEM_TEST_SHELLS=bash runs the per-shell suites for those shells only (bash-legacy.test.ts). */
const onlyShells = process.env.TANDEM_TEST_SHELLS?.split(',');
export const availableShells = (['bash', 'zsh', 'sh'] as const).filter((name) => which(name) !== null && (!onlyShells || onlyShells.includes(name)));

export function missingShells(): string[] {
  return (['bash', 'zsh', 'sh'] as const).filter((name) => which(name) === null);
}

/** Starts a real shell in a real PTY; every session opened here is closed by `closeAll`. */
export class SessionPool {
  private readonly sessions: TerminalSession[] = [];

  constructor(private readonly home: string) {}

  async open(shell: string, opts: Partial<SessionOptions> = {}): Promise<TerminalSession> {
    const session = await TerminalSession.start({
      shell: resolveShell(shell),
      cwd: this.home,
      origin: 'agent',
      baseEnv: { ...process.env, HOME: this.home, ZDOTDIR: undefined, HISTFILE: undefined },
      cols: 120,
      rows: 30,
      ...opts,
    });
    this.sessions.push(session);
    return session;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.sessions.splice(0).map((session) => session.close()));
  }
}

export function hasCommand(name: string): boolean {
  return which(name) !== null;
}

/** A TerminalHost for the suite: bash on a fresh home of its own, shut down and removed after it. */
export function suiteHost(prefix: string): { readonly host: TerminalHost; readonly home: string } {
  const state = { host: null as TerminalHost | null, home: '' };
  beforeAll(() => {
    state.home = mkdtempSync(join(tmpdir(), prefix));
    state.host = new TerminalHost({ env: { ...process.env, HOME: state.home, SHELL: '/bin/bash', ZDOTDIR: undefined, HISTFILE: undefined }, home: state.home });
  });
  afterAll(async () => {
    await state.host?.shutdown();
    rmSync(state.home, { recursive: true, force: true });
  });
  return {
    get host() {
      return state.host!;
    },
    get home() {
      return state.home;
    },
  };
}
