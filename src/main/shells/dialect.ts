import type { LineClear } from './line-clear.js';

/** One shell family: how to launch it with Tandem's integration layered over the person's files. */
export type DialectName = 'bash' | 'zsh' | 'sh' | 'pwsh' | 'powershell' | 'cmd';

/** full: start and end markers with sequence numbers; end-only: end markers alone; none: a plain terminal. */
export type IntegrationLevel = 'full' | 'end-only' | 'none';

export type StartupFiles = 'user' | 'clean';

export interface LaunchContext {
  secret: string;
  /** A fresh 0700 directory for the integration files; the shell deletes them once read (the directory too unless the plan `keepsDir`). */
  rcDir: string;
  /**
   * A file the integration may write and read back at its prompt instead of forking (bash's
   * `__tandem_capture`), in a 0700 directory of the user's own: in rcDir, or in a confined
   * terminal's private /tmp; absent or null: none (the subshell).
   */
  scratch?: string | null;
  startupFiles: StartupFiles;
  agent: boolean;
  /**
   * Agent terminals: a file the host makes just before it types an agent's input into a running
   * program and removes at the next end marker; while it exists the integration empties what a
   * program left unread at the prompt (tandem.bash `__tandem_drain`). In rcDir, which the plan
   * then keeps. null: nothing is emptied (the person's own typeahead is theirs).
   */
  drainFlag?: string | null;
  /** Agent terminals keep their own history, never the person's. */
  historyFile: string | null;
  /** Variables the integration re-applies after the startup files ran (agent terminals). */
  reapplyEnv: Record<string, string>;
  /** Agent terminals: the exported names kept after the startup files whatever their values (env.ts `agentKeptNames`). */
  keepEnv: readonly string[];
  /** The environment the shell is spawned with (after Tandem's own changes). */
  env: Record<string, string>;
  platform: NodeJS.Platform;
}

export interface LaunchPlan {
  args: string[];
  env: Record<string, string>;
  /** Files to write (mode 0600) inside rcDir before spawning. */
  files: Array<{ path: string; content: string }>;
  /** The integration uses rcDir while the shell lives (bash's scratch file): only the files go once read, the directory at close. */
  keepsDir?: boolean;
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
  /**
   * Input a program left unread (it read part of a line, or none) never reaches the shell's line
   * in an agent terminal on `platform`: the integration empties it at the prompt (bash 4.4 and
   * later, zsh) or the line editor drops it (PSReadLine, seen on Linux). Where not, input to a
   * program could run as a line nobody judged, so it asks.
   */
  readonly drainsUnread?: (platform: NodeJS.Platform) => boolean;
  /**
   * Agent terminals: the integration prints P when a command ended, and empties its input up to
   * the host's fence (its F marker) while the drain flag is there (tandem.bash `__tandem_drain`):
   * the host's writes for a running program are ordered against it (session.ts `programGate`).
   */
  readonly fencesDrain?: boolean;
  /**
   * The line editor reads the terminal raw with echo off (readline, ZLE), so the shell's own
   * reads at its prompt are never waiting evidence (terminal/readiness/probe.ts). pwsh is not
   * one: .NET keeps the terminal so for Read-Host too.
   */
  readonly rawLineEditor?: boolean;
  /**
   * The shell's prompt or line editor asks the terminal something and reads the answer
   * (PSReadLine asks the cursor position). Where not, an answer the emulator writes while the
   * shell is at its prompt is addressed to nobody, and its bytes would be keys to the line
   * editor (readline takes a DECRQSS answer's ESC P for M-p, a history search: black-box round
   * 13): it is not written (session.ts `replyReader`).
   */
  readonly promptAsks?: boolean;
  /**
   * The shell has no line editor: it reads its lines in the terminal's line mode, so a line
   * longer than that mode keeps cannot reach it whole (terminal/session/line-room.ts).
   */
  readonly canonicalLine?: boolean;
  /**
   * Its commands resolve paths from the folder its process is in (a POSIX shell; not pwsh, which
   * hands each command its location by name): the kernel's folder of that process (`kernelCwd`)
   * is where they run, whatever the shell last reported.
   */
  readonly processCwd?: boolean;
  /** How the judge reads an agent's lines in this shell (src/main/agent/judge); absent: every line asks. */
  readonly judge?: JudgeGrammar;
  /** The keys that empty the line editor before a judged line is typed (line-clear.ts); null: none is safe here. */
  lineClear(platform: NodeJS.Platform): LineClear | null;
  plan(shellPath: string, ctx: LaunchContext): LaunchPlan;
}

/** What the judge needs to know of a shell's language: everything else about the shell stays in its dialect. */
export interface JudgeGrammar {
  /** The tree-sitter grammar its lines parse with (agent/judge/tree-sitter.ts). */
  readonly grammar: 'bash' | 'pwsh';
  /** The quoting rules of the literal-word check (agent/judge/literal-words.ts). */
  readonly words: 'posix' | 'pwsh';
  /** The integration reports aliases, functions and PATH after each command (redirect-report.ts). */
  readonly reportsRedirects: boolean;
  /** The report covers the command hash table and loaded builtins too. */
  readonly reportsHash: boolean;
}

/** POSIX single-quoting. */
export function shQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
