import type { EventPayload, TandemApi } from '../../../shared/contract';
import type { Appearance, Settings } from '../../../shared/settings';
import { DEFAULT_LIMITS } from '../../../shared/limits';
import { type Problem, toProblem } from '../lib/problem';
import { type ShortcutAction, shortcutOf } from '../lib/shortcuts';
import { AckBatcher } from './ack-batcher';
import { type Frame, FrameSequencer } from './frame-sequencer';
import { chunkInput } from './input-chunks';
import { exposeForTests } from './test-hook';
import { TypedInputTracker } from './typed-input';
import { type PathClick, XtermView } from './xterm-view';
import type { ViewMark } from './command-marks';
import type { IProgressState } from '@xterm/addon-progress';

const mac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);

/** Quiet time after the last layout change before the new size goes to the host. */
export const resizeDebounceMs = 80;
/** A second gap this soon after recovering from one skips ahead instead of re-attaching again. */
export const gapRecoveryCooldownMs = 5000;

export type AttachState = 'detached' | 'attaching' | 'attached' | 'closed' | 'failed';

type EarlyEvent =
  | { kind: 'output'; payload: EventPayload<'output'> }
  | { kind: 'attachmentClosed'; payload: EventPayload<'attachmentClosed'> }
  | { kind: 'writable'; payload: EventPayload<'writable'> };

const noop = (): void => undefined;

/**
 * One terminal's view: an xterm.js instance attached to the host. It writes the snapshot, then
 * the attachment's frames in sequence order, acknowledges what xterm.js has applied, and sends
 * the person's input and size. Protocol replies never leave it (see protocol-guard.ts).
 */
export class TerminalController {
  state = $state<AttachState>('detached');
  writable = $state(true);
  /** Why the attachment ended or could not be made. */
  problem = $state<Problem | null>(null);
  searchOpen = $state(false);
  /**
   * The person typed while input was held back (see `holdInput`); counts up so that every
   * attempt shows the hint again.
   */
  heldBack = $state(0);
  /**
   * Input is held back, never sent: an agent drives this terminal and the person chose that
   * typing does not take over. Set by the view from the roster and the settings.
   */
  holdInput = false;
  /** Counts the program's bells (BEL), for the view's visual or audible bell. */
  bells = $state(0);
  /** Copy the selection as soon as it is made (a setting). */
  copyOnSelect = false;
  /** The program's progress (OSC 9;4), for the tab. */
  progress = $state<IProgressState>({ state: 0, value: 0 });
  /** Why the last clicked path did not open, until the person dismisses it. */
  linkProblem = $state<string | null>(null);

  readonly view = new XtermView();
  private api: TandemApi | null = null;
  private offEvents = noop;
  private attachmentId: string | null = null;

  /** This view's attachment now (output events name it), or null while detached. */
  get attachment(): string | null {
    return this.attachmentId;
  }
  /** Events that arrive while an attach call is in flight: its frames can precede its result. */
  private early: EarlyEvent[] | null = null;
  private attachToken = 0;
  private lastGapRecoveryAt = Number.NEGATIVE_INFINITY;
  private sentSize: { cols: number; rows: number } | null = null;
  /** Focus was asked for while the view was hidden; it is given when the view shows. */
  private focusPending = false;
  private resizeTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly typed = new TypedInputTracker();
  private readonly sequencer = new FrameSequencer(
    (frame) => this.applyFrame(frame),
    () => this.recoverFromGap(),
  );
  private readonly acks = new AckBatcher((seq) => this.sendAck(seq));
  private readonly cleanups: Array<() => void> = [];

  constructor(readonly terminalId: string) {
    const term = this.view.term;
    const onData = term.onData((data) => this.sendInput(data));
    const onBinary = term.onBinary((data) => this.sendInput(data));
    term.attachCustomKeyEventHandler((event) => this.onKey(event));
    const onBell = term.onBell(() => (this.bells += 1));
    const onSelection = term.onSelectionChange(() => {
      if (this.copyOnSelect && term.hasSelection()) this.copySelection();
    });
    const onProgress = this.view.progress.onChange((progress) => (this.progress = { ...progress }));
    this.view.onOpenPath = (click) => void this.openPath(click);
    this.cleanups.push(
      () => onData.dispose(),
      () => onBinary.dispose(),
      () => onBell.dispose(),
      () => onSelection.dispose(),
      () => onProgress.dispose(),
      exposeForTests(terminalId, term, this.view.marks),
    );
  }

  /** Opens a clicked path on the host (its cwd, its editor setting); a failure shows on the view. */
  async openPath(click: PathClick): Promise<void> {
    if (!this.api) return;
    this.linkProblem = null;
    try {
      await this.api.call('openPath', {
        id: this.terminalId,
        path: click.path,
        ...(click.line ? { line: click.line } : {}),
        ...(click.column ? { column: click.column } : {}),
      });
    } catch (error) {
      this.linkProblem = toProblem(error).message;
    }
  }

  /** Uses a (new) connection; call `attach` afterwards. */
  bind(api: TandemApi): void {
    if (this.api === api) return;
    this.offEvents();
    this.api = api;
    this.attachmentId = null;
    const offs = [
      api.on('output', (payload) => this.route({ kind: 'output', payload })),
      api.on('attachmentClosed', (payload) => this.route({ kind: 'attachmentClosed', payload })),
      api.on('writable', (payload) => this.route({ kind: 'writable', payload })),
    ];
    this.offEvents = () => offs.forEach((off) => off());
  }

  /** Opens the view into its element once it is visible; output written before is kept. */
  open(element: HTMLElement): void {
    if (this.view.isOpen) return;
    this.view.open(element);
    const stopObserving = this.typed.observe(element);
    this.cleanups.push(stopObserving);
  }

  /** Attaches (again): a fresh snapshot replaces whatever the view showed. */
  async attach(): Promise<void> {
    const api = this.api;
    if (!api) return;
    const token = ++this.attachToken;
    this.releaseAttachment(api);
    this.state = 'attaching';
    this.problem = null;
    this.early = [];
    const size = this.proposedSize();
    try {
      const result = await api.call('attach', { id: this.terminalId, ...(size ?? {}) });
      if (token !== this.attachToken || this.api !== api) {
        api.call('detach', { attachmentId: result.attachmentId }).catch(noop);
        return;
      }
      const term = this.view.term;
      term.reset();
      this.view.marks.clear();
      if (term.cols !== result.info.cols || term.rows !== result.info.rows) term.resize(result.info.cols, result.info.rows);
      this.sentSize = { cols: result.info.cols, rows: result.info.rows };
      // The snapshot's marks go on once it is parsed, before any frame after it.
      term.write(result.snapshot, () => {
        if (token === this.attachToken && result.marks) this.view.marks.restore(result.marks);
      });
      this.attachmentId = result.attachmentId;
      this.writable = result.writable;
      this.sequencer.reset(result.seq);
      this.acks.reset(result.seq);
      this.state = 'attached';
      const early = this.early ?? [];
      this.early = null;
      for (const event of early) this.route(event);
      this.fitSoon();
    } catch (error) {
      if (token !== this.attachToken) return;
      this.early = null;
      this.state = 'failed';
      this.problem = toProblem(error);
    }
  }

  /** The connection went away: nothing to detach on the host, which already dropped it. */
  connectionLost(): void {
    this.attachToken += 1;
    this.attachmentId = null;
    this.early = null;
    this.acks.cancel();
    this.sequencer.reset(0);
    if (this.state === 'attached' || this.state === 'attaching') this.state = 'detached';
  }

  private releaseAttachment(api: TandemApi): void {
    this.acks.cancel();
    this.sequencer.reset(0);
    const previous = this.attachmentId;
    this.attachmentId = null;
    if (previous) api.call('detach', { attachmentId: previous }).catch(noop);
  }

  private route(event: EarlyEvent): void {
    if (this.early) {
      this.early.push(event);
      return;
    }
    if (!this.attachmentId || event.payload.attachmentId !== this.attachmentId) return;
    switch (event.kind) {
      case 'output':
        this.sequencer.push(event.payload);
        break;
      case 'writable':
        this.writable = event.payload.writable;
        if (this.writable) this.fitSoon();
        break;
      case 'attachmentClosed':
        this.attachmentId = null;
        this.acks.cancel();
        this.sequencer.reset(0);
        this.state = 'closed';
        this.problem = { code: event.payload.error.code, message: event.payload.error.message };
        break;
    }
  }

  private applyFrame(frame: Frame): void {
    const token = this.attachToken;
    const term = this.view.term;
    // A mark is placed where the parser reaches its position: the data is written in pieces
    // split there, and each piece's callback runs before the next piece is parsed.
    let written = 0;
    for (const mark of frame.marks ?? []) {
      const at = Math.min(Math.max(mark.at, written), frame.data.length);
      if (at > written) term.write(frame.data.slice(written, at));
      written = at;
      term.write('', () => {
        if (token === this.attachToken) this.view.marks.apply(mark);
      });
    }
    term.write(written === 0 ? frame.data : frame.data.slice(written), () => {
      if (token === this.attachToken) this.acks.applied(frame.seq, frame.data.length);
    });
  }

  private sendAck(seq: number): void {
    const api = this.api;
    const attachmentId = this.attachmentId;
    if (api && attachmentId) api.call('ack', { attachmentId, seq }).catch(noop);
  }

  /** A frame went missing: a fresh snapshot is exact; a recurring gap is skipped instead. */
  private recoverFromGap(): void {
    const now = performance.now();
    if (now - this.lastGapRecoveryAt < gapRecoveryCooldownMs) {
      console.warn(`Tandem: output frames of terminal ${this.terminalId} arrived with a gap; showing the later ones.`);
      return;
    }
    this.lastGapRecoveryAt = now;
    void this.attach();
  }

  private sendInput(data: string): void {
    const api = this.api;
    const attachmentId = this.attachmentId;
    if (!api || !attachmentId || !this.writable || this.state !== 'attached') return;
    const typed = this.typed.isTyped(data);
    if (this.holdInput) {
      // The host would drop untyped input here anyway; typed input would take control.
      if (typed) this.heldBack += 1;
      return;
    }
    for (const chunk of chunkInput(data)) {
      api.call('input', { attachmentId, data: chunk, typed }).catch((error: unknown) => this.onInputError(error));
    }
  }

  private onInputError(error: unknown): void {
    const problem = toProblem(error);
    if (problem.code === 'forbidden') this.writable = false;
    else if (problem.code === 'not_found' && this.state === 'attached') {
      this.state = 'closed';
      this.problem = problem;
    }
  }

  // ---- size -----------------------------------------------------------------------------------

  private proposedSize(): { cols: number; rows: number } | null {
    const size = this.view.proposeSize();
    if (!size) return null;
    return { cols: Math.min(size.cols, DEFAULT_LIMITS.maxCols), rows: Math.min(size.rows, DEFAULT_LIMITS.maxRows) };
  }

  /** Layout changed: fit the view and tell the host, once things settle. */
  fitSoon(): void {
    if (this.resizeTimer) clearTimeout(this.resizeTimer);
    this.resizeTimer = setTimeout(() => {
      this.resizeTimer = null;
      this.fit();
    }, resizeDebounceMs);
  }

  /** Only the view with input sets the size; a read-only view follows the host's size. */
  private fit(): void {
    const api = this.api;
    const attachmentId = this.attachmentId;
    if (!api || !attachmentId || !this.writable || this.state !== 'attached') return;
    const size = this.proposedSize();
    if (!size) return;
    const term = this.view.term;
    if (term.cols !== size.cols || term.rows !== size.rows) term.resize(size.cols, size.rows);
    if (this.sentSize?.cols === size.cols && this.sentSize.rows === size.rows) return;
    this.sentSize = size;
    api.call('resize', { attachmentId, ...size }).catch(noop);
  }

  /** The person's settings: a new font refits the view, and the host gets the new size. */
  applySettings(settings: Settings, appearance: Appearance): void {
    this.copyOnSelect = settings.copyOnSelect;
    if (this.view.apply(settings, appearance)) this.fitSoon();
  }

  /** The host's size as the roster reports it, followed by read-only views. */
  followHostSize(cols: number, rows: number): void {
    if (this.writable || this.state !== 'attached') return;
    const term = this.view.term;
    if (term.cols !== cols || term.rows !== rows) term.resize(cols, rows);
  }

  /** The size the host should give a new terminal so it starts at this view's size. */
  sizeHint(): { cols: number; rows: number } | null {
    return this.proposedSize();
  }

  // ---- keyboard -------------------------------------------------------------------------------

  /** App shortcuts never reach the program; copy with a selection copies it. */
  private onKey(event: KeyboardEvent): boolean {
    // Ctrl+Up/Down (Cmd on macOS): the previous or next command's mark, as in VS Code.
    if (
      (event.key === 'ArrowUp' || event.key === 'ArrowDown') &&
      (mac ? event.metaKey && !event.ctrlKey : event.ctrlKey && !event.metaKey) &&
      !event.altKey &&
      !event.shiftKey
    ) {
      if (event.type === 'keydown') this.view.marks.jump(event.key === 'ArrowUp' ? -1 : 1);
      return false;
    }
    const action: ShortcutAction | null = shortcutOf(event);
    if (!action) return true;
    if (action === 'copy' && event.type === 'keydown') this.copySelection();
    return false;
  }

  /** Puts text on the clipboard (a command line, a command's output). */
  copyText(text: string): void {
    if (text) navigator.clipboard?.writeText(text).catch(() => undefined);
  }

  /** Runs a marked command again: its line and Enter, as the person's own typing (the menu offers it only in their own idle terminals). */
  rerun(mark: ViewMark): void {
    const api = this.api;
    const attachmentId = this.attachmentId;
    if (!api || !attachmentId || !mark.command || !this.writable || this.holdInput) return;
    api.call('input', { attachmentId, data: `${mark.command}\r`, typed: true }).catch((error: unknown) => this.onInputError(error));
    this.view.term.scrollToBottom();
  }

  /** The buffer line under a point of the window, or null outside the grid. */
  lineAt(clientY: number): number | null {
    const screen = this.view.term.element?.querySelector('.xterm-screen');
    if (!screen) return null;
    const rect = screen.getBoundingClientRect();
    if (clientY < rect.top || clientY >= rect.bottom) return null;
    return this.view.term.buffer.active.viewportY + Math.floor(((clientY - rect.top) / rect.height) * this.view.term.rows);
  }

  copySelection(): void {
    const selection = this.view.term.getSelection();
    if (!selection) return;
    navigator.clipboard?.writeText(selection).catch(() => document.execCommand('copy'));
  }

  /** Pastes as the person's own input (the context menu or a right-click), bracketed when the program asks. */
  paste(text: string): void {
    if (!text) return;
    this.typed.markMenuPaste();
    this.view.term.paste(text);
  }

  /** Focuses the terminal now, or as soon as its tab is shown. */
  focus(): void {
    if (this.isVisible) this.view.term.focus();
    else this.focusPending = true;
  }

  /** The view's tab became visible (and the view is open). */
  shown(): void {
    this.fitSoon();
    if (!this.focusPending) return;
    this.focusPending = false;
    this.view.term.focus();
  }

  private get isVisible(): boolean {
    const element = this.view.term.element;
    return this.view.isOpen && element !== undefined && element.offsetParent !== null;
  }

  dispose(): void {
    this.attachToken += 1;
    if (this.api) this.releaseAttachment(this.api);
    this.offEvents();
    this.sequencer.dispose();
    if (this.resizeTimer) clearTimeout(this.resizeTimer);
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    this.view.dispose();
  }
}
