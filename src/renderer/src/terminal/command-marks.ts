import type { IDecoration, IDisposable, IMarker, Terminal } from '@xterm/xterm';
import { MarkRuler } from './mark-ruler';
import { type LineList, normalLines } from './xterm-internals';
import { commandLineOffset, type FrameMark, type MarkStatus, type SnapshotMarks } from '../../../shared/command-marks';
import type { Appearance } from '../../../shared/settings';

/**
 * The most marks a view keeps; older ones go first (the host keeps as many). A mark costs the
 * view a number, not an xterm.js marker: only marks near the viewport or on the screen have one
 * (see `CommandMarksView`), so a frame pays nothing per mark in the scrollback.
 */
export const maxViewMarks = 10_000;

/**
 * The overview ruler's colours: a canvas takes no CSS variables, so these are the values of
 * app.css and light.css (`--ok`, `--danger`, `--warn`, `--accent`, `--muted`); the gutter marks
 * use the variables themselves.
 */
export const markRulerColors: Record<Appearance, Record<MarkStatus, string>> = {
  dark: { success: '#98c379', failure: '#ec7f88', interrupted: '#e5c07b', running: '#9aa2af', waiting_input: '#61afef' },
  light: { success: '#2e7020', failure: '#c2213c', interrupted: '#8a5d00', running: '#535a66', waiting_input: '#2857c4' },
};

const statusText: Record<MarkStatus, string> = {
  success: 'Succeeded',
  failure: 'Failed',
  interrupted: 'Interrupted',
  running: 'Running',
  waiting_input: 'Waiting for input',
};

/** A mark's tooltip: how the command ended (with its exit code), and the command. */
export function markTitle(mark: { status: MarkStatus; exitCode: number | null; command: string | null }): string {
  const code = mark.exitCode !== null && mark.status !== 'success' ? ` (exit code ${mark.exitCode})` : '';
  const command = mark.command ? `\n${mark.command.length > 200 ? `${mark.command.slice(0, 200)}…` : mark.command}` : '';
  return `${statusText[mark.status]}${code}${command}`;
}

export interface ViewMark {
  readonly id: number;
  command: string | null;
  status: MarkStatus;
  exitCode: number | null;
  /** The command's line in the buffer (-1 once the line left it). */
  readonly start: { readonly line: number };
  /** Lines from the command's line to its end marker's, null while it runs. */
  endDelta: number | null;
  /** The output's last line is the end marker's own (no newline before the prompt). */
  endInclusive: boolean;
  selected: boolean;
}

class Entry implements ViewMark {
  selected = false;
  /** Removed from the view. */
  gone = false;
  /** An xterm.js marker and gutter decoration, only while the line is near the viewport or on the screen. */
  marker: IMarker | null = null;
  decoration: IDecoration | null = null;
  readonly start: { readonly line: number };

  constructor(
    counter: { trimmed: number },
    readonly id: number,
    public command: string | null,
    public status: MarkStatus,
    public exitCode: number | null,
    /** The line counted from the first line the buffer ever had: the line plus the lines trimmed since. */
    public abs: number,
    public endDelta: number | null,
    public endInclusive: boolean,
  ) {
    this.start = new MarkLine(this, counter);
  }
}

/** A mark's line, read when asked: its number less the lines trimmed since. */
class MarkLine {
  constructor(
    private readonly entry: Entry,
    private readonly counter: { trimmed: number },
  ) {}

  get line(): number {
    return this.entry.gone ? -1 : this.entry.abs - this.counter.trimmed;
  }
}

/**
 * A view's command marks: a gutter mark at each command's line and an overview-ruler entry,
 * coloured by how it ended. Placed from the attach snapshot (lines relative to the snapshot's
 * cursor) and from output frames (at their position in the data, with the host's rule for the
 * command's line). A mark goes with its line (trimmed, cleared, reset).
 *
 * The view keeps each mark's line itself: one listener on the normal buffer's line list counts
 * the lines it trims (a mark's line is its number minus that count) and moves marks past lines
 * inserted or deleted (a reflow, a scroll region), as xterm.js does for each of its markers. A
 * mark has an xterm.js marker and decoration only while its line is within a screen of the
 * viewport or on the screen (where an erase clears it: the marker says so), created and disposed
 * as the viewport moves; the ruler is one canvas of its own (mark-ruler.ts). So a frame costs the
 * same with 10,000 marks as with a few.
 */
export class CommandMarksView {
  private readonly byId = new Map<number, Entry>();
  /** In line order. */
  private ordered: Entry[] = [];
  /** Marks with an xterm.js marker now. */
  private readonly live = new Set<Entry>();
  private readonly counter = { trimmed: 0 };
  private lines: LineList | null = null;
  private lineEvents: IDisposable[] = [];
  private appearance: Appearance = 'dark';
  private selected: Entry | null = null;
  /** Snapshot marks held while the alternate screen is shown: placed when the shell's screen returns. */
  private deferred: SnapshotMarks | null = null;
  private readonly subscriptions: IDisposable[];
  private updateQueued = false;
  private readonly ruler: MarkRuler;
  /** What each gutter element last showed (render skips unchanged ones). */
  private readonly drawn = new WeakMap<HTMLElement, { id: number; status: MarkStatus; exitCode: number | null; command: string | null; selected: boolean }>();
  /** A click on a gutter mark: the view opens the command's menu there. */
  onMarkClick: (mark: ViewMark, x: number, y: number) => void = () => undefined;

  constructor(private readonly term: Terminal) {
    this.ruler = new MarkRuler(
      term,
      () => this.rulerMarks(),
      () => this.counter.trimmed,
    );
    this.subscriptions = [
      term.buffer.onBufferChange((buffer) => {
        if (buffer.type !== 'normal') {
          // The alternate screen shows no marks: markers are for the normal buffer's lines.
          for (const entry of [...this.live]) this.unlive(entry);
        } else if (this.deferred) {
          const snapshot = this.deferred;
          this.deferred = null;
          this.placeSnapshot(snapshot);
        }
        this.queueUpdate();
        this.ruler.invalidate();
      }),
      term.onScroll(() => this.queueUpdate()),
      term.onWriteParsed(() => this.queueUpdate()),
      term.onResize(() => {
        this.queueUpdate();
        this.ruler.invalidate();
      }),
    ];
    this.hook();
  }

  /** Follows the normal buffer's line list (a reset makes a new one; its marks were cleared then). */
  private hook(): void {
    const lines = normalLines(this.term);
    if (lines === this.lines) return;
    for (const event of this.lineEvents) event.dispose();
    this.lineEvents = [];
    this.lines = lines;
    this.counter.trimmed = 0;
    if (!lines) {
      console.warn('Command marks: this xterm.js has no line events; marks will not follow scrolling.');
      return;
    }
    this.lineEvents = [
      lines.onTrim((amount) => {
        // Trimmed marks leave in the next sweep (one splice, not one per line).
        this.counter.trimmed += amount;
      }),
      lines.onInsert(({ index, amount }) => {
        for (let i = this.lowerBound(index); i < this.ordered.length; i++) this.ordered[i]!.abs += amount;
      }),
      lines.onDelete(({ index, amount }) => {
        const from = this.lowerBound(index);
        let to = from;
        while (to < this.ordered.length && this.ordered[to]!.start.line < index + amount) to += 1;
        for (let i = to; i < this.ordered.length; i++) this.ordered[i]!.abs -= amount;
        for (const entry of this.ordered.slice(from, to)) this.remove(entry);
      }),
    ];
  }

  /** The first mark at or below `line` (marks are in line order). */
  private lowerBound(line: number): number {
    let lo = 0;
    let hi = this.ordered.length;
    const abs = line + this.counter.trimmed;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.ordered[mid]!.abs < abs) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Drops the marks whose lines were trimmed. */
  private sweep(): void {
    let count = 0;
    while (count < this.ordered.length && this.ordered[count]!.abs < this.counter.trimmed) count += 1;
    if (count === 0) return;
    const trimmed = this.ordered.splice(0, count);
    for (const entry of trimmed) this.forget(entry);
    // Marks leaving at the top are the scroll the ruler already follows: redrawn with it, at most
    // every rulerScrollRedrawMs (a redraw per frame of a flood cost each frame the whole ruler).
    this.ruler.scrolled();
  }

  get list(): readonly ViewMark[] {
    this.sweep();
    return this.ordered;
  }

  /** Forgets every mark (a new snapshot replaces the screen, or a reset). */
  clear(): void {
    for (const entry of this.ordered) this.forget(entry);
    this.ordered = [];
    this.selected = null;
    this.deferred = null;
    this.ruler.invalidate();
  }

  /** The marks of an attach snapshot, once the snapshot is written. */
  restore(snapshot: SnapshotMarks): void {
    this.clear();
    if (this.term.buffer.active.type !== 'normal') this.deferred = snapshot;
    else this.placeSnapshot(snapshot);
  }

  private placeSnapshot(snapshot: SnapshotMarks): void {
    this.hook();
    const buffer = this.term.buffer.active;
    const cursor = buffer.baseY + buffer.cursorY;
    for (const entry of snapshot.list) {
      const line = cursor + entry.line - snapshot.cursorLine;
      // Lines this view's scrollback did not keep have no mark.
      if (line < 0 || line >= buffer.length) continue;
      this.add(
        { id: entry.id, command: entry.command, status: entry.status, exitCode: entry.exitCode },
        line,
        entry.endLine === null ? null : entry.endLine - entry.line,
        false,
      );
    }
  }

  /** A frame's mark, applied where the frame's data reached its position (from a write callback). */
  apply(news: FrameMark): void {
    this.sweep();
    const mark = this.byId.get(news.id);
    const buffer = this.term.buffer.active;
    const normal = buffer.type === 'normal';
    if (news.kind === 'start' && !mark) {
      if (normal) {
        this.hook();
        this.add(news, buffer.baseY + buffer.cursorY + commandLineOffset(buffer), null, false);
        // Its marker now, not at the next update: the rest of this write may erase the line
        // (`clear`), and only a marker hears that (xterm.js parses on before microtasks run).
        const entry = this.byId.get(news.id);
        if (entry && !entry.marker) this.enliven(entry);
      }
      return;
    }
    if (!mark) return;
    if (news.kind === 'end' && mark.endDelta === null && normal && mark.start.line >= 0) {
      mark.endDelta = buffer.baseY + buffer.cursorY - mark.start.line;
      mark.endInclusive = buffer.cursorX > 0;
    }
    const recolour = mark.status !== news.status;
    mark.command = news.command;
    mark.status = news.status;
    mark.exitCode = news.exitCode;
    this.paint(mark);
    if (recolour) this.ruler.invalidate();
  }

  private add(
    info: { id: number; command: string | null; status: MarkStatus; exitCode: number | null },
    line: number,
    endDelta: number | null,
    endInclusive: boolean,
  ): void {
    if (line < 0) return;
    const old = this.byId.get(info.id);
    if (old) this.remove(old);
    const entry = new Entry(this.counter, info.id, info.command, info.status, info.exitCode, line + this.counter.trimmed, endDelta, endInclusive);
    this.byId.set(entry.id, entry);
    // After any mark on the same line (commands come one after another).
    const at = this.lowerBound(line + 1);
    if (at === this.ordered.length) this.ordered.push(entry);
    else this.ordered.splice(at, 0, entry);
    if (this.ordered.length > maxViewMarks) for (const oldest of this.ordered.splice(0, this.ordered.length - maxViewMarks)) this.forget(oldest);
    this.queueUpdate();
    this.ruler.invalidate();
  }

  /** Removes one mark (its line was cleared or deleted). */
  private remove(entry: Entry): void {
    if (entry.gone) return;
    const at = this.ordered.indexOf(entry);
    if (at >= 0) this.ordered.splice(at, 1);
    this.forget(entry);
    this.ruler.invalidate();
  }

  /** Disposes a mark's marker and decoration and drops it from the lookups (not from `ordered`). */
  private forget(entry: Entry): void {
    entry.gone = true;
    if (this.byId.get(entry.id) === entry) this.byId.delete(entry.id);
    if (this.selected === entry) this.selected = null;
    this.unlive(entry);
  }

  private unlive(entry: Entry): void {
    this.live.delete(entry);
    const { marker, decoration } = entry;
    entry.marker = null;
    entry.decoration = null;
    decoration?.dispose();
    if (marker && !marker.isDisposed) marker.dispose();
  }

  /** Gives a mark its xterm.js marker and gutter decoration (the normal buffer is shown). */
  private enliven(entry: Entry): void {
    const buffer = this.term.buffer.active;
    const line = entry.start.line;
    const marker = this.term.registerMarker(line - (buffer.baseY + buffer.cursorY));
    if (!marker) return;
    if (marker.line !== line) {
      marker.dispose();
      return;
    }
    entry.marker = marker;
    this.live.add(entry);
    marker.onDispose(() => {
      if (entry.marker !== marker) return;
      // xterm.js disposed it: an erase cleared the line, or the line was deleted or trimmed.
      if (entry.start.line >= 0 && !entry.gone) this.remove(entry);
      else this.unlive(entry);
    });
    const decoration = this.term.registerDecoration({ marker, x: 0, width: 1 });
    if (!decoration) return;
    entry.decoration = decoration;
    decoration.onRender((element) => this.render(entry, element));
  }

  private queueUpdate(): void {
    if (this.updateQueued) return;
    this.updateQueued = true;
    // After the write or scroll that asked (a microtask: before the frame that draws it).
    queueMicrotask(() => {
      this.updateQueued = false;
      this.update();
    });
  }

  /** Markers for the marks within a screen of the viewport and on the screen; none for the rest. */
  private update(): void {
    this.sweep();
    this.ruler.scrolled();
    const buffer = this.term.buffer.active;
    if (buffer.type !== 'normal' || !this.lines) return;
    const rows = this.term.rows;
    const want = new Set<Entry>();
    for (let i = this.lowerBound(buffer.viewportY - rows); i < this.ordered.length && this.ordered[i]!.start.line < buffer.viewportY + 2 * rows; i++)
      want.add(this.ordered[i]!);
    for (let i = this.lowerBound(buffer.baseY); i < this.ordered.length; i++) want.add(this.ordered[i]!);
    for (const entry of [...this.live]) if (!want.has(entry)) this.unlive(entry);
    for (const entry of want) if (!entry.marker) this.enliven(entry);
  }

  private *rulerMarks(): Iterable<{ line: number; color: string }> {
    const colors = markRulerColors[this.appearance];
    for (const entry of this.ordered) yield { line: entry.start.line, color: colors[entry.status] };
  }

  /** The gutter mark: left of the first column, in the view's padding (see TerminalView's `.xterm-host`). */
  private render(entry: Entry, element: HTMLElement): void {
    if (!element.classList.contains('command-mark')) {
      element.classList.add('command-mark');
      element.addEventListener('mousedown', (event) => {
        event.preventDefault();
        event.stopPropagation();
        this.onMarkClick(entry, event.clientX, event.clientY);
      });
    }
    // xterm.js calls this on every frame for every decoration it drew, off screen too: a hidden
    // mark is written when it shows again (xterm calls again then), a shown one only on a change.
    if (element.style.display === 'none') return;
    const last = this.drawn.get(element);
    if (
      last &&
      last.id === entry.id &&
      last.status === entry.status &&
      last.exitCode === entry.exitCode &&
      last.command === entry.command &&
      last.selected === entry.selected
    )
      return;
    this.drawn.set(element, { id: entry.id, status: entry.status, exitCode: entry.exitCode, command: entry.command, selected: entry.selected });
    element.dataset.status = entry.status;
    element.dataset.markId = String(entry.id);
    element.classList.toggle('selected', entry.selected);
    element.title = markTitle(entry);
    element.setAttribute('aria-label', element.title);
  }

  private paint(entry: Entry): void {
    if (entry.decoration?.element) this.render(entry, entry.decoration.element);
  }

  setAppearance(appearance: Appearance): void {
    if (this.appearance === appearance) return;
    this.appearance = appearance;
    this.ruler.invalidate();
  }

  /**
   * Scrolls to the previous (-1) or next (+1) command: from the one jumped to last, else from
   * the viewport (the cursor's line when at the bottom). Past the last, back to the bottom.
   */
  jump(direction: -1 | 1): ViewMark | null {
    this.sweep();
    const buffer = this.term.buffer.active;
    if (buffer.type !== 'normal') return null;
    let target: Entry | undefined;
    const from = this.selected ? this.ordered.indexOf(this.selected) : -1;
    if (from >= 0) target = this.ordered[from + direction];
    else if (direction < 0) {
      const before = buffer.viewportY >= buffer.baseY ? buffer.baseY + buffer.cursorY : buffer.viewportY;
      target = this.ordered[this.lowerBound(before) - 1];
    } else target = this.ordered[this.lowerBound(buffer.viewportY + 1)];
    this.select(target ?? null);
    if (!target) {
      if (direction > 0) this.term.scrollToBottom();
      return null;
    }
    this.term.scrollToLine(target.start.line);
    return target;
  }

  /** Scrolls to one command's mark by its id (the Timeline panel); false when it is not in the scrollback. */
  jumpTo(markId: number): boolean {
    this.sweep();
    const entry = this.byId.get(markId);
    if (!entry || entry.start.line < 0 || this.term.buffer.active.type !== 'normal') return false;
    this.select(entry);
    this.term.scrollToLine(entry.start.line);
    return true;
  }

  private select(entry: Entry | null): void {
    if (this.selected === entry) return;
    const previous = this.selected;
    this.selected = entry;
    if (previous) {
      previous.selected = false;
      this.paint(previous);
    }
    if (entry) {
      entry.selected = true;
      this.paint(entry);
    }
  }

  /** The command around a buffer line: the last one that started at or above it. */
  at(line: number): ViewMark | null {
    this.sweep();
    return this.ordered[this.lowerBound(line + 1) - 1] ?? null;
  }

  /** The lines of a command's output (first, last), or null while it has none to show. */
  outputRange(mark: ViewMark): { first: number; last: number } | null {
    this.sweep();
    if (mark.start.line < 0) return null;
    const buffer = this.term.buffer.active;
    // The output starts below the command line's last row (a long command wraps).
    let first = mark.start.line + 1;
    while (buffer.getLine(first)?.isWrapped) first += 1;
    let last: number;
    if (mark.endDelta !== null) last = mark.start.line + mark.endDelta - (mark.endInclusive ? 0 : 1);
    else {
      // Still running: up to the cursor, or the next command's line.
      const next = this.ordered[this.ordered.indexOf(mark as Entry) + 1];
      last = next ? next.start.line - 1 : buffer.baseY + buffer.cursorY;
    }
    return last >= first ? { first, last } : null;
  }

  /** A command's output as text (wrapped rows joined, lines right-trimmed). */
  outputText(mark: ViewMark): string {
    const range = this.outputRange(mark);
    if (!range) return '';
    const buffer = this.term.buffer.active;
    let text = '';
    for (let y = range.first; y <= range.last; y++) {
      const line = buffer.getLine(y);
      if (!line) continue;
      if (y > range.first && !line.isWrapped) text += '\n';
      text += line.translateToString(!buffer.getLine(y + 1)?.isWrapped);
    }
    return text;
  }

  selectOutput(mark: ViewMark): boolean {
    const range = this.outputRange(mark);
    if (!range) return false;
    this.term.selectLines(range.first, range.last);
    return true;
  }

  dispose(): void {
    this.clear();
    for (const event of this.lineEvents) event.dispose();
    for (const subscription of this.subscriptions) subscription.dispose();
    this.ruler.dispose();
  }
}
