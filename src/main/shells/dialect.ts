/** One shell family: how to launch it with Tandem's integration layered over the person's files. */
export type DialectName = 'bash' | 'zsh' | 'sh' | 'pwsh' | 'powershell' | 'cmd';

/** full: start and end markers with sequence numbers; end-only: end markers alone; none: a plain terminal. */
export type IntegrationLevel = 'full' | 'end-only' | 'none';

export type StartupFiles = 'user' | 'clean';

export interface LaunchContext {
  secret: string;
  /** A fresh 0700 directory for the integration files; the shell deletes it once read. */
  rcDir: string;
  startupFiles: StartupFiles;
  agent: boolean;
  /** Agent terminals keep their own history, never the person's. */
  historyFile: string | null;
  /** Variables the integration re-applies after the startup files ran (agent terminals). */
  reapplyEnv: Record<string, string>;
  /** The environment the shell is spawned with (after Tandem's own changes). */
  env: Record<string, string>;
  platform: NodeJS.Platform;
}

export interface LaunchPlan {
  args: string[];
  env: Record<string, string>;
  /** Files to write (mode 0600) inside rcDir before spawning. */
  files: Array<{ path: string; content: string }>;
}

export interface ShellDialect {
  readonly name: DialectName;
  readonly integration: IntegrationLevel;
  /** Whether multi-line text can go in as one bracketed paste (one command, one marker). */
  readonly bracketedPaste: boolean;
  /** Without bracketed paste: multi-line text as one line, each control character after Ctrl+V (readline's quoted-insert). */
  readonly quotedInsert?: boolean;
  /**
   * The shell keeps a thread reading the terminal while commands run (PSReadLine): waiting
   * evidence then needs proof that the input was consumed, even after the start marker.
   */
  readonly backgroundReader?: boolean;
  plan(shellPath: string, ctx: LaunchContext): LaunchPlan;
}

/** POSIX single-quoting. */
export function shQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
