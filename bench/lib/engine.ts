/** Engine sessions for figures: a private HOME, clean startup files, and guaranteed teardown. */
import { resolveShell } from '../../src/main/shells/resolve.js';
import { type SessionOptions, TerminalSession } from '../../src/main/terminal/session/session.js';
import type { SendResult } from '../../src/shared/types.js';

export function benchEnv(home: string): NodeJS.ProcessEnv {
  return { ...process.env, HOME: home, ZDOTDIR: undefined, HISTFILE: undefined, PROMPT_COMMAND: undefined, PS1: undefined };
}

export function agentOptions(home: string, shell = 'bash', extra: Partial<SessionOptions> = {}): SessionOptions {
  return {
    shell: resolveShell(shell),
    cwd: home,
    origin: 'agent',
    startupFiles: 'clean',
    baseEnv: benchEnv(home),
    cols: 120,
    rows: 30,
    ...extra,
  };
}

/** Every session opened through a scope is closed by `closeAll`, whatever happened in between. */
export class SessionScope {
  private readonly sessions = new Set<TerminalSession>();

  constructor(private readonly home: string) {}

  async open(shell = 'bash', extra: Partial<SessionOptions> = {}): Promise<TerminalSession> {
    const session = await TerminalSession.start(agentOptions(this.home, shell, extra));
    this.sessions.add(session);
    return session;
  }

  async close(session: TerminalSession): Promise<void> {
    this.sessions.delete(session);
    const result = await session.close();
    if (!result.closed) {
      const again = await session.close();
      if (!again.closed) throw new Error(`session close left ${again.orphans.map((o) => `${o.comm}(${o.pid})`).join(', ')}`);
    }
  }

  async closeAll(): Promise<void> {
    const all = [...this.sessions];
    this.sessions.clear();
    await Promise.allSettled(all.map((session) => session.close()));
  }
}

/** Throws with the result when a send did not end as expected. */
export function expectStatus(result: SendResult, status: SendResult['status'], what: string): SendResult {
  if (result.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${result.status}/${result.evidence} (output ${JSON.stringify(result.output.slice(0, 80))})`);
  }
  return result;
}
