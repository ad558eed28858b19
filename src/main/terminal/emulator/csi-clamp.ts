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
 * split between two chunks waits for the next: whole up to `maxHeld` characters, as what the
 * terminal keeps of it past that (xterm.js takes any number of leading zeros and carries out the
 * controls inside a sequence, so padding must not make one pass).
 */
const looping = new Set(['S', 'T', '^', 'L', 'M', 'b', 'I', 'Z']);
/** More than any screen's rows, columns or tab stops (the host's maximum is 500 columns, 200 rows). */
export const maxCount = 1000;
const maxHeld = 64;
/** A count kept of a sequence cut off past `maxHeld`: above any bound here, so the final still decides. */
const maxHeldValue = 99999;

/** A sequence's parameters without the controls and DELs the terminal takes out of it. */
function paramsOf(body: string, inner: boolean): string {
  return inner ? body.replace(/[\x00-\x1f\x7f]/g, '') : body;
}

/** The C0 controls inside a sequence, which the terminal carries out as it meets them. */
function controlsOf(body: string, inner: boolean): string {
  return inner ? body.replace(/[^\x00-\x1f]/g, '') : '';
}

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
      // Parameters and intermediates (0x20-0x3f), then the final byte (0x40-0x7e). Like xterm.js,
      // a C0 control inside is carried out and the sequence goes on, DEL is ignored, CAN and SUB
      // cancel it and ESC begins another: `\x1b[2147\r483647S` is still one scroll.
      let end = start;
      let inner = false;
      while (end < all.length) {
        const b = all.charCodeAt(end);
        if (b === 0x18 || b === 0x1a || b === 0x1b) break;
        if (b > 0x3f && b !== 0x7f) break;
        if (b < 0x20 || b === 0x7f) inner = true;
        end++;
      }
      if (end >= all.length) {
        // Cut off: it waits for the rest. One padded past `maxHeld` (zeros, controls) waits as
        // what the terminal keeps of it, its controls carried out now: bounded, and no padding
        // lets a count through.
        const body = all.slice(start);
        if (body.length <= maxHeld) return this.hold(out, all, copied, i);
        const kept = all.slice(i, start) + paramsOf(body, inner).replace(/\d+/g, (n) => String(Math.min(Number(n), maxHeldValue)));
        const sent = out + all.slice(copied, i) + controlsOf(body, inner);
        this.held = kept.slice(0, maxHeld);
        return sent;
      }
      const final = all[end]!;
      if (!looping.has(final)) {
        i = end - (all.charCodeAt(end) === 0x1b ? 1 : 0);
        continue;
      }
      const body = all.slice(start, end);
      const params = paramsOf(body, inner);
      const bounded = params.replace(/\d+/g, (n) => (Number(n) > maxCount ? String(maxCount) : n));
      if (bounded !== params || inner) {
        // The controls it carried go first, as the terminal would have carried them out.
        out += all.slice(copied, i) + controlsOf(body, inner) + all.slice(i, start) + bounded;
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
