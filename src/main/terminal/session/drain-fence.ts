/**
 * The drain flag of an agent terminal and the fence that ends the prompt's drain (tandem.bash
 * `__tandem_drain`).
 *
 * What the host writes for a running program (an agent's input, the emulator's answer to a
 * program's question) must never reach the shell's line editor unemptied: readline took a DECRQSS
 * answer's ESC P for M-p, and a planted line ran unjudged (black-box rounds 13 and 14). Timing
 * cannot promise that (the host reads the shell's markers late under a flood), so two orders do:
 *
 * - The host makes the flag, then looks at who is in front; the shell prints its P marker, then
 *   looks at the flag. A write that goes ahead found no P for its command, so the shell's look at
 *   the flag came after the flag was made: that prompt empties its input (`gate`).
 * - The shell empties up to a fence, a fresh nonce the host writes when it reads the F marker:
 *   the terminal's input is one queue, and everything the host wrote for the command went ahead
 *   of it. Nothing is written for the command after its P (the gate says 'drop').
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/** What the gate says of a write for a running program: 'sync' asks again once the PTY's pending output was read. */
export type FenceGate = 'write' | 'drop' | 'sync';

/** Who is in front of the terminal: the shell's own group, another (a program), or unknown (no /proc). */
export type FrontGroup = 'shell' | 'program' | 'unknown';

export class DrainFence {
  /** The flag's nonce while it is made (armed). */
  private nonce: string | null = null;
  /** P, F and E markers read, and how many had been read when the running command began. */
  private prompts = 0;
  private promptsAtBegin = 0;
  /** Commands begun: a write held across a wait goes only for the command it was meant for. */
  commands = 0;

  /**
   * `flag`: the file the shell looks at (LaunchContext.drainFlag); null: the person's terminal.
   * `fencing`: the integration prints P and F (ShellDialect.fencesDrain); `fenced` with a flag.
   */
  readonly fenced: boolean;

  constructor(
    private readonly flag: string | null,
    fencing: boolean,
  ) {
    this.fenced = flag !== null && fencing;
  }

  get armed(): boolean {
    return this.nonce !== null;
  }

  /**
   * Makes the flag with a fresh nonce, whole (written aside, then renamed: the shell never reads
   * half of it). False where it cannot be made (no flag: the person's terminal; the directory gone).
   */
  arm(): boolean {
    if (!this.flag) return false;
    if (this.nonce !== null) return true;
    const nonce = randomBytes(12).toString('hex');
    const aside = `${this.flag}.new`;
    try {
      writeFileSync(aside, `${nonce}\n`, { mode: 0o600, flag: 'w' });
      renameSync(aside, this.flag);
      this.nonce = nonce;
      return true;
    } catch {
      // The rc directory is gone (the terminal closes): nothing reads the prompt any more.
      return false;
    }
  }

  disarm(): void {
    this.nonce = null;
    if (this.flag) rmSync(this.flag, { force: true });
  }

  /**
   * A command began: its line was written, or its start marker came (one the person typed).
   * Counted, not told by the markers' numbers: a line with no command (a comment) gets no number
   * of its own, and its prompt would look like the last command's.
   */
  began(): void {
    this.commands += 1;
    this.promptsAtBegin = this.prompts;
  }

  /** A P, F or E marker: the running command ended; nothing more is written for it. */
  prompt(): void {
    this.prompts += 1;
  }

  /** Whether the running command's prompt began (the shell may be looking at its flag, or past it). */
  get atPrompt(): boolean {
    return this.prompts > this.promptsAtBegin;
  }

  /**
   * Whether a write for the running command (`running` false: none runs) may go, once the flag
   * is made. `front` is read after `arm`: a program in front means the shell has not taken the
   * terminal back, so its P and its look at the flag are still to come.
   */
  gate(running: boolean, front: () => FrontGroup): FenceGate {
    if (!running || this.atPrompt || !this.arm()) return 'drop';
    return front() === 'program' ? 'write' : 'sync';
  }

  /**
   * The bytes that end the drain the F marker asked for: a newline (it ends a line the line mode
   * overflowed, which n_tty would otherwise drop the nonce into), the nonce, and RS, the drain's
   * delimiter. The flag goes: the drain has read it. An F with no flag of the host's (a file
   * someone else made there) gets that file's nonce, so the shell does not wait in vain.
   */
  fenceBytes(): string {
    let nonce = this.nonce;
    if (nonce === null && this.flag) {
      try {
        nonce = /^[0-9a-f]{1,64}/.exec(readFileSync(this.flag, 'utf8'))?.[0] ?? '';
      } catch {
        nonce = '';
      }
    }
    this.disarm();
    return `\n${nonce ?? ''}\x1e`;
  }
}
