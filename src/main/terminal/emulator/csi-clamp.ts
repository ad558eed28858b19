/**
 * Bounds the counts of the control sequences a terminal carries out once per unit: scroll up or
 * down (SU `S`, SD `T` and `^`), insert or delete lines (IL `L`, DL `M`), repeat the last
 * character (REP `b`) and tab forward or back (CHT `I`, CBT `Z`). xterm.js loops over the count
 * it is given, up to 2^31 - 1: one allowed `find -printf '\033[2147483647S'` (14 bytes) kept the
 * host's main thread, and so every terminal, approval and agent, busy for hours, and a REP of a
 * billion grew it to 4 GB (black-box round 17). A count past what any screen shows does nothing
 * more that anyone sees: scrolling or repeating past `maxCount` lines' or characters' worth only
 * pushes blank or identical lines through a scrollback that keeps 10,000.
 *
 * Applied to a terminal's output before anything reads it (the headless emulator, the history,
 * the person's view), so every xterm.js that draws it gets the same bounded sequence. A sequence
 * split between two chunks waits, whole, for the next (at most `maxHeld` characters; a longer one
 * is no CSI any program prints and passes as it is).
 */
const looping = new Set(['S', 'T', '^', 'L', 'M', 'b', 'I', 'Z']);
/** More than any screen's rows, columns or tab stops (the host's maximum is 500 columns, 200 rows). */
export const maxCount = 1000;
const maxHeld = 64;

export class CsiClamp {
  private held = '';

  /** `text` with the looping counts bounded; a CSI cut off at its end is kept for the next call. */
  filter(text: string): string {
    const all = this.held === '' ? text : this.held + text;
    this.held = '';
    // The common case: no CSI at all (a flood of plain text).
    if (all.indexOf('\x1b') === -1 && all.indexOf('\x9b') === -1) return all;
    let out = '';
    let copied = 0;
    const introducer = /[\x1b\x9b]/g;
    for (let i = 0; i < all.length; i++) {
      introducer.lastIndex = i;
      if (introducer.exec(all) === null) break;
      i = introducer.lastIndex - 1;
      const c = all.charCodeAt(i);
      const start = c === 0x9b ? i + 1 : i + 2;
      if (c === 0x1b) {
        if (i + 1 >= all.length) return this.hold(out, all, copied, i);
        if (all.charCodeAt(i + 1) !== 0x5b) continue;
      }
      // Parameters and intermediates (0x20-0x3f), then the final byte (0x40-0x7e).
      let end = start;
      while (end < all.length && end - start < maxHeld) {
        const b = all.charCodeAt(end);
        if (b < 0x20 || b > 0x3f) break;
        end++;
      }
      if (end >= all.length) {
        if (end - start < maxHeld) return this.hold(out, all, copied, i);
        continue;
      }
      const final = all[end]!;
      if (!looping.has(final)) {
        i = end;
        continue;
      }
      const params = all.slice(start, end);
      const bounded = params.replace(/\d+/g, (n) => (n.length > 4 || Number(n) > maxCount ? String(maxCount) : n));
      if (bounded !== params) {
        out += all.slice(copied, start) + bounded;
        copied = end;
      }
      i = end;
    }
    return copied === 0 ? all : out + all.slice(copied);
  }

  /** What comes before `from` goes now; the unfinished sequence from there waits. */
  private hold(out: string, all: string, copied: number, from: number): string {
    this.held = all.slice(from);
    return out + all.slice(copied, from);
  }

  /** The unfinished sequence kept (the output ended with it). */
  flush(): string {
    const held = this.held;
    this.held = '';
    return held;
  }
}
