import type { IDecoration, IDisposable, IMarker, Terminal } from '@xterm/xterm';
import { commandLineOffset, type FrameMark, type MarkStatus, type SnapshotMarks } from '../../../shared/command-marks';
import type { Appearance } from '../../../shared/settings';

/**
 * The most marks a view keeps; older ones go first (the host keeps 10,000). Each xterm.js marker
 * listens to every line a full scrollback drops, so a frame pays per mark: with 10,000 a 100-line
 * frame took 65 ms against 2.8 ms without (bench `marks`); the newest 500 keep it to a few ms.
 */
export const maxViewMarks = 500;

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
  readonly start: IMarker;
  /**
   * Lines from the command's line to its end marker's, null while it runs: a count, not a second
   * marker (each xterm marker listens to every trimmed line; with thousands that is the frame's cost).
   */
  endDelta: number | null;
  /** The output's last line is the end marker's own (no newline before the prompt). */
  endInclusive: boolean;
  decoration: IDecoration | null;
  selected: boolean;
}

/**
 * A view's command marks: an xterm marker at each command's line with a gutter mark and an
 * overview-ruler entry coloured by how it ended. Placed from the attach snapshot (lines relative
 * to the snapshot's cursor) and from output frames (at their position in the data, with the
 * host's rule for the command's line). A mark goes with its line (trimmed, cleared, reset).
 */
export class CommandMarksView {
  private readonly byId = new Map<number, ViewMark>();
  /** In line order: commands come one after another. */
  private ordered: ViewMark[] = [];
  private appearance: Appearance = 'dark';
  private selected: ViewMark | null = null;
  /** Snapshot marks held while the alternate screen is shown: placed when the shell's screen returns. */
  private deferred: SnapshotMarks | null = null;
  private readonly bufferChange: IDisposable;
  /** What each gutter element last showed (render skips unchanged ones). */
  private readonly drawn = new WeakMap<HTMLElement, { id: number; status: MarkStatus; exitCode: number | null; command: string | null; selected: boolean }>();
  /** A click on a gutter mark: the view opens the command's menu there. */
  onMarkClick: (mark: ViewMark, x: number, y: number) => void = () => undefined;

  constructor(private readonly term: Terminal) {
    this.bufferChange = term.buffer.onBufferChange((buffer) => {
      if (buffer.type !== 'normal' || !this.deferred) return;
      const snapshot = this.deferred;
      this.deferred = null;
      this.placeSnapshot(snapshot);
    });
  }

  get list(): readonly ViewMark[] {
    return this.ordered;
  }

  /** Forgets every mark (a new snapshot replaces the screen). */
  clear(): void {
    for (const mark of this.ordered) this.disposeMark(mark);
    this.ordered = [];
    this.byId.clear();
    this.selected = null;
    this.deferred = null;
  }

  /** The marks of an attach snapshot, once the snapshot is written. */
  restore(snapshot: SnapshotMarks): void {
    this.clear();
    if (this.term.buffer.active.type !== 'normal') this.deferred = snapshot;
    else this.placeSnapshot(snapshot);
  }

  private placeSnapshot(snapshot: SnapshotMarks): void {
    const buffer = this.term.buffer.active;
    const cursor = buffer.baseY + buffer.cursorY;
    for (const entry of snapshot.list) {
      // Lines this view's scrollback did not keep have no mark.
      if (cursor + entry.line - snapshot.cursorLine < 0) continue;
      const start = this.term.registerMarker(entry.line - snapshot.cursorLine);
      this.add({ id: entry.id, command: entry.command, status: entry.status, exitCode: entry.exitCode }, start, entry.endLine === null ? null : entry.endLine - entry.line, false);
    }
  }

  /** A frame's mark, applied where the frame's data reached its position (from a write callback). */
  apply(news: FrameMark): void {
    const mark = this.byId.get(news.id);
    const buffer = this.term.buffer.active;
    const normal = buffer.type === 'normal';
    if (news.kind === 'start' && !mark) {
      if (normal) this.add(news, this.term.registerMarker(commandLineOffset(buffer)), null, false);
      return;
    }
    if (!mark) return;
    if (news.kind === 'end' && mark.endDelta === null && normal && mark.start.line >= 0) {
      mark.endDelta = buffer.baseY + buffer.cursorY - mark.start.line;
      mark.endInclusive = buffer.cursorX > 0;
    }
    mark.command = news.command;
    mark.status = news.status;
    mark.exitCode = news.exitCode;
    this.paint(mark);
  }

  private add(info: { id: number; command: string | null; status: MarkStatus; exitCode: number | null }, start: IMarker | undefined, endDelta: number | null, endInclusive: boolean): void {
    if (!start || start.isDisposed) return;
    const mark: ViewMark = { ...info, start, endDelta, endInclusive, decoration: null, selected: false };
    this.byId.set(mark.id, mark);
    this.ordered.push(mark);
    start.onDispose(() => this.remove(mark));
    mark.decoration =
      this.term.registerDecoration({ marker: start, x: 0, width: 1, overviewRulerOptions: { color: markRulerColors[this.appearance][mark.status], position: 'left' } }) ?? null;
    mark.decoration?.onRender((element) => this.render(mark, element));
    while (this.ordered.length > maxViewMarks) this.ordered[0]!.start.dispose();
  }

  private remove(mark: ViewMark): void {
    if (this.byId.get(mark.id) !== mark) return;
    this.byId.delete(mark.id);
    const at = this.ordered.indexOf(mark);
    if (at >= 0) this.ordered.splice(at, 1);
    if (this.selected === mark) this.selected = null;
    this.disposeMark(mark);
  }

  private disposeMark(mark: ViewMark): void {
    mark.decoration?.dispose();
    if (!mark.start.isDisposed) mark.start.dispose();
  }

  /** The gutter mark: left of the first column, in the view's padding (see TerminalView's `.xterm-host`). */
  private render(mark: ViewMark, element: HTMLElement): void {
    if (!element.classList.contains('command-mark')) {
      element.classList.add('command-mark');
      element.addEventListener('mousedown', (event) => {
        event.preventDefault();
        event.stopPropagation();
        this.onMarkClick(mark, event.clientX, event.clientY);
      });
    }
    // xterm.js calls this on every frame for every mark it ever drew, off screen too: a hidden
    // mark is written when it shows again (xterm calls again then), a shown one only on a change.
    if (element.style.display === 'none') return;
    const last = this.drawn.get(element);
    if (last && last.id === mark.id && last.status === mark.status && last.exitCode === mark.exitCode && last.command === mark.command && last.selected === mark.selected) return;
    this.drawn.set(element, { id: mark.id, status: mark.status, exitCode: mark.exitCode, command: mark.command, selected: mark.selected });
    element.dataset.status = mark.status;
    element.dataset.markId = String(mark.id);
    element.classList.toggle('selected', mark.selected);
    element.title = markTitle(mark);
    element.setAttribute('aria-label', element.title);
  }

  private paint(mark: ViewMark): void {
    if (mark.decoration) mark.decoration.options.overviewRulerOptions = { color: markRulerColors[this.appearance][mark.status], position: 'left' };
    if (mark.decoration?.element) this.render(mark, mark.decoration.element);
  }

  setAppearance(appearance: Appearance): void {
    if (this.appearance === appearance) return;
    this.appearance = appearance;
    for (const mark of this.ordered) this.paint(mark);
  }

  /**
   * Scrolls to the previous (-1) or next (+1) command: from the one jumped to last, else from
   * the viewport (the cursor's line when at the bottom). Past the last, back to the bottom.
   */
  jump(direction: -1 | 1): ViewMark | null {
    const buffer = this.term.buffer.active;
    if (buffer.type !== 'normal') return null;
    const live = this.ordered.filter((mark) => mark.start.line >= 0);
    let target: ViewMark | undefined;
    const from = this.selected ? live.indexOf(this.selected) : -1;
    if (from >= 0) target = live[from + direction];
    else if (direction < 0) {
      const before = buffer.viewportY >= buffer.baseY ? buffer.baseY + buffer.cursorY : buffer.viewportY;
      target = live.findLast((mark) => mark.start.line < before);
    } else target = live.find((mark) => mark.start.line > buffer.viewportY);
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
    const mark = this.byId.get(markId);
    if (!mark || mark.start.line < 0 || this.term.buffer.active.type !== 'normal') return false;
    this.select(mark);
    this.term.scrollToLine(mark.start.line);
    return true;
  }

  private select(mark: ViewMark | null): void {
    if (this.selected === mark) return;
    const previous = this.selected;
    this.selected = mark;
    if (previous) {
      previous.selected = false;
      this.paint(previous);
    }
    if (mark) {
      mark.selected = true;
      this.paint(mark);
    }
  }

  /** The command around a buffer line: the last one that started at or above it. */
  at(line: number): ViewMark | null {
    return this.ordered.findLast((mark) => mark.start.line >= 0 && mark.start.line <= line) ?? null;
  }

  /** The lines of a command's output (first, last), or null while it has none to show. */
  outputRange(mark: ViewMark): { first: number; last: number } | null {
    const buffer = this.term.buffer.active;
    // The output starts below the command line's last row (a long command wraps).
    let first = mark.start.line + 1;
    while (buffer.getLine(first)?.isWrapped) first += 1;
    let last: number;
    if (mark.endDelta !== null) last = mark.start.line + mark.endDelta - (mark.endInclusive ? 0 : 1);
    else {
      // Still running: up to the cursor, or the next command's line.
      const next = this.ordered[this.ordered.indexOf(mark) + 1];
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
    this.bufferChange.dispose();
  }
}
