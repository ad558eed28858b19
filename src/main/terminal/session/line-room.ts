/**
 * Long lines and the kernel's line mode. While a terminal is in canonical mode (a command runs,
 * a program reads lines, and after each prompt until the shell's line editor takes the terminal
 * back: the person's precmd hooks, a slow git prompt, run in that stretch) the kernel keeps at
 * most one line's worth of unread input: on Linux 4095 bytes (N_TTY_BUF_SIZE less one), on
 * macOS and the BSDs MAX_CANON. Of a longer line the rest is dropped and its newline still ends
 * it, so the shell would run a part of the judged line, or wait at a continuation prompt with
 * the rest lost (zsh came back `waiting_input` with `quote>` for a 20,000-byte alias line sent
 * right after the previous command ended). Short lines fit and go at once; a long one waits for
 * the line editor (readline, ZLE read raw) or is refused where only the line mode reads it.
 */
import type { Clock } from '../../clock.js';
import { sleep } from '../../clock.js';
import type { TtyModes } from '../../pty/termios.js';

/** Bytes of one line the line mode keeps (the line end aside) on `platform`; null on Windows, which has no such mode (ConPTY). */
export function canonicalRoom(platform: NodeJS.Platform): number | null {
  return platform === 'win32' ? null : platform === 'linux' ? 4095 : 1023;
}

/** Bytes in the longest line of `payload` (CR and LF end lines, as ICRNL makes them). */
export function longestLine(payload: string): number {
  let longest = 0;
  for (const line of payload.split(/[\r\n]/)) longest = Math.max(longest, Buffer.byteLength(line));
  return longest;
}

/** How often the terminal's modes are read while a long line waits for the line editor. */
export const lineEditorPollMs = 10;

/**
 * Waits until the terminal leaves canonical mode (the line editor reads it raw), the bound
 * passes, or one of `signals` aborts (checked between reads). Modes that cannot be read count as raw: nothing better is known.
 */
export async function untilRaw(
  readModes: () => Promise<TtyModes | null>,
  clock: Clock,
  opts: { ms: number; signals?: ReadonlyArray<AbortSignal | undefined> },
): Promise<'raw' | 'timeout' | 'aborted'> {
  const until = clock.now() + opts.ms;
  for (;;) {
    if (opts.signals?.some((signal) => signal?.aborted)) return 'aborted';
    const modes = await readModes();
    if (!modes || !modes.icanon) return 'raw';
    if (clock.now() >= until) return 'timeout';
    await sleep(clock, Math.min(lineEditorPollMs, Math.max(0, until - clock.now())));
  }
}
