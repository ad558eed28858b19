import { FitAddon } from '@xterm/addon-fit';
import { ImageAddon } from '@xterm/addon-image';
import { type IProgressState, ProgressAddon } from '@xterm/addon-progress';
import { SearchAddon } from '@xterm/addon-search';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { WebglAddon } from '@xterm/addon-webgl';
import { type IBufferLine, type ILink, Terminal } from '@xterm/xterm';
import { type Appearance, defaultSettings, type Settings } from '../../../shared/settings';
import { ligatureRanges } from './ligatures';
import { findPaths, hyperlinkHint, linkHint, type PathMatch } from './links';
import { webUrl } from '../../../shared/web-url';
import { swallowProtocolRequests } from './protocol-guard';
import { CommandMarksView } from './command-marks';
import { xtermTheme } from './theme';

/** The host's pseudoconsole when it runs on Windows (its `environment`); set before views attach. */
let hostWindowsPty: { backend: 'conpty'; buildNumber: number } | undefined;

export function setHostWindowsPty(info: typeof hostWindowsPty): void {
  hostWindowsPty = info;
}

/** VS Code's default: text too close to its background is drawn lighter or darker until it reads (WCAG AA). */
export const minimumContrastRatio = 4.5;

/** The most a program may put on the clipboard with one OSC 52 (base64 text, decoded). */
export const osc52MaxBytes = 1024 * 1024;

const mac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);

/** One tooltip for every view: what a click on the link under the pointer does. */
let hintElement: HTMLElement | null = null;

/** A web link in a new browsing context (the desktop app hands it to the system browser); anything else opens nothing. */
function openWebLink(uri: string): void {
  const href = webUrl(uri);
  if (href) window.open(href, '_blank', 'noopener,noreferrer');
}

function showHint(event: MouseEvent, text: string): void {
  if (!hintElement) {
    hintElement = document.createElement('div');
    hintElement.className = 'link-hint';
    hintElement.setAttribute('role', 'tooltip');
    Object.assign(hintElement.style, {
      position: 'fixed',
      zIndex: '1000',
      pointerEvents: 'none',
      padding: '3px 8px',
      borderRadius: '4px',
      font: '12px system-ui, sans-serif',
      background: 'var(--panel-raised, #1c2029)',
      color: 'var(--text-strong, #f1f3f5)',
      border: '1px solid var(--border-strong, #343a46)',
      boxShadow: '0 2px 8px rgb(0 0 0 / 30%)',
    });
    document.body.append(hintElement);
  }
  hintElement.textContent = text;
  hintElement.style.left = `${Math.min(event.clientX + 12, window.innerWidth - 240)}px`;
  hintElement.style.top = `${event.clientY + 16}px`;
  hintElement.hidden = false;
}

function hideHint(): void {
  if (hintElement) hintElement.hidden = true;
}

/** A buffer line's text, and for each UTF-16 offset the cell it is drawn in (wide characters take two). */
function lineCells(line: IBufferLine, cols: number): { text: string; cellAt: number[] } {
  let text = '';
  const cellAt: number[] = [];
  for (let x = 0; x < cols; x++) {
    const cell = line.getCell(x);
    if (!cell || cell.getWidth() === 0) continue;
    const chars = cell.getChars() || ' ';
    for (let i = 0; i < chars.length; i++) cellAt.push(x);
    text += chars;
  }
  cellAt.push(cols);
  return { text, cellAt };
}

/** A path the person clicked (with the modifier), as found in the line. */
export type PathClick = Pick<PathMatch, 'path' | 'line' | 'column'>;

/**
 * One xterm.js instance with Tandem's addons. The terminal exists (and takes output) before it
 * is shown; it is opened into the DOM the first time its tab is visible, because measuring
 * glyphs needs a laid-out element.
 */
export class XtermView {
  readonly term: Terminal;
  readonly search = new SearchAddon({ highlightLimit: 1000 });
  private readonly fitAddon = new FitAddon();
  private webgl: WebglAddon | null = null;
  private images: ImageAddon | null = null;
  private opened = false;
  /** OSC 9;4 progress as the program last set it. */
  readonly progress = new ProgressAddon();
  /** The ligature joiner's id while the setting is on (ligatures.ts). */
  private ligatureJoiner: number | null = null;
  /** Programs may set the clipboard (a setting); never read it. */
  private osc52 = false;
  /** Command marks in the gutter and the overview ruler (issue 29). */
  readonly marks: CommandMarksView;
  /** Called for a clicked file path; the controller sends it to the host. */
  onOpenPath: (click: PathClick) => void = () => undefined;

  constructor() {
    this.term = new Terminal({
      allowProposedApi: true,
      fontFamily: defaultSettings.fontFamily,
      fontSize: defaultSettings.fontSize,
      lineHeight: 1.15,
      theme: xtermTheme('dark'),
      // The host keeps the authoritative history and sends it on attach; the view keeps as much.
      scrollback: defaultSettings.scrollback,
      cursorBlink: defaultSettings.cursorBlink,
      cursorStyle: defaultSettings.cursorStyle,
      macOptionIsMeta: true,
      rightClickSelectsWord: false,
      drawBoldTextInBrightColors: false,
      minimumContrastRatio,
      // ConPTY repaints on resize: without this xterm reflows too and lines are doubled.
      windowsPty: hostWindowsPty,
      // The command marks' ruler beside the scrollbar.
      overviewRuler: { width: 8 },
      // A program's hyperlinks (OSC 8): as printed URLs, Ctrl/Cmd+click and web links only; the
      // hint names the target, which the link's text need not. Without a handler xterm.js
      // follows them on a plain click after a confirm().
      linkHandler: {
        activate: (event, uri) => {
          if (!event.ctrlKey && !event.metaKey) return;
          hideHint();
          openWebLink(uri);
        },
        hover: (event, uri) => showHint(event, hyperlinkHint(uri, mac)),
        leave: hideHint,
        // Links of other schemes are shown (their hint says they do not open); activate refuses them.
        allowNonHttpProtocols: true,
      },
    });
    this.marks = new CommandMarksView(this.term);
    // A full reset (a Clear, a reset shell) makes new buffers; xterm.js keeps the old markers alive.
    this.term.parser.registerEscHandler({ final: 'c' }, () => {
      this.marks.clear();
      return false;
    });
    swallowProtocolRequests(this.term);
    this.term.loadAddon(new Unicode11Addon());
    // Same width tables as the host's emulator, so cursor positions agree on emoji and CJK.
    this.term.unicode.activeVersion = '11';
    this.term.loadAddon(this.fitAddon);
    this.term.loadAddon(this.search);
    this.term.loadAddon(
      new WebLinksAddon(
        (event, uri) => {
          // A plain click selects text as usual; Ctrl/Cmd+click follows the link.
          if (!event.ctrlKey && !event.metaKey) return;
          openWebLink(uri);
        },
        { hover: (event) => showHint(event, linkHint('url', mac)), leave: hideHint },
      ),
    );
    this.term.registerLinkProvider({ provideLinks: (y, callback) => callback(this.pathLinks(y)) });
    this.term.loadAddon(this.progress);
    // OSC 52: `c;<base64>` sets the clipboard when the setting allows; a query (`?`) is never answered.
    this.term.parser.registerOscHandler(52, (data) => {
      const [, payload = ''] = data.split(';', 2);
      if (this.osc52 && payload !== '?') this.writeClipboard(payload);
      return true;
    });
  }

  /** File paths on one buffer line (1-based), as links that open with Ctrl/Cmd+click. */
  private pathLinks(y: number): ILink[] | undefined {
    const line = this.term.buffer.active.getLine(y - 1);
    if (!line) return undefined;
    const { text, cellAt } = lineCells(line, this.term.cols);
    const links = findPaths(text).map((match): ILink => ({
      range: { start: { x: cellAt[match.start]! + 1, y }, end: { x: cellAt[match.end - 1]! + 1, y } },
      text: text.slice(match.start, match.end),
      decorations: { pointerCursor: true, underline: true },
      activate: (event) => {
        if (!event.ctrlKey && !event.metaKey) return;
        hideHint();
        this.onOpenPath({ path: match.path, line: match.line, column: match.column });
      },
      hover: (event) => showHint(event, linkHint('path', mac)),
      leave: hideHint,
    }));
    return links.length > 0 ? links : undefined;
  }

  private writeClipboard(base64: string): void {
    if (base64.length > (osc52MaxBytes * 4) / 3 + 4) return;
    let text: string;
    try {
      const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
      text = new TextDecoder().decode(bytes);
    } catch {
      return;
    }
    navigator.clipboard?.writeText(text).catch(() => undefined);
  }

  get progressState(): IProgressState {
    return this.progress.progress;
  }

  /** The person's settings; true when the glyph size changed (the view must refit). */
  apply(settings: Settings, appearance: Appearance): boolean {
    const options = this.term.options;
    const resized = options.fontSize !== settings.fontSize || options.fontFamily !== settings.fontFamily;
    if (resized) {
      options.fontSize = settings.fontSize;
      options.fontFamily = settings.fontFamily;
    }
    if (options.cursorStyle !== settings.cursorStyle) options.cursorStyle = settings.cursorStyle;
    if (options.cursorBlink !== settings.cursorBlink) options.cursorBlink = settings.cursorBlink;
    if (options.scrollback !== settings.scrollback) options.scrollback = settings.scrollback;
    this.osc52 = settings.osc52Clipboard;
    if (settings.fontLigatures && this.ligatureJoiner === null) {
      this.ligatureJoiner = this.term.registerCharacterJoiner(ligatureRanges);
      this.term.refresh(0, this.term.rows - 1);
    } else if (!settings.fontLigatures && this.ligatureJoiner !== null) {
      this.term.deregisterCharacterJoiner(this.ligatureJoiner);
      this.ligatureJoiner = null;
      this.term.refresh(0, this.term.rows - 1);
    }
    if (settings.inlineImages && !this.images) {
      try {
        // Size reports would answer programs from this view; the host's emulator is the only answerer.
        const images = new ImageAddon({ enableSizeReports: false });
        this.term.loadAddon(images);
        this.images = images;
      } catch (error) {
        // Its sixel decoder is WebAssembly: a page that may not compile it keeps text only.
        console.warn('Inline images are unavailable:', error);
      }
    } else if (!settings.inlineImages && this.images) {
      this.images.dispose();
      this.images = null;
    }
    if (this.appearance !== appearance) {
      this.appearance = appearance;
      options.theme = xtermTheme(appearance);
    }
    this.marks.setAppearance(appearance);
    return resized;
  }

  private appearance: Appearance = 'dark';

  get isOpen(): boolean {
    return this.opened;
  }

  open(element: HTMLElement): void {
    if (this.opened) return;
    this.opened = true;
    this.term.open(element);
    this.loadWebgl();
  }

  /** GPU rendering when the browser has WebGL2; the DOM renderer otherwise, without a word. */
  private loadWebgl(): void {
    try {
      const webgl = new WebglAddon();
      webgl.onContextLoss(() => {
        webgl.dispose();
        if (this.webgl === webgl) this.webgl = null;
      });
      this.term.loadAddon(webgl);
      this.webgl = webgl;
    } catch {
      this.webgl = null;
    }
  }

  /** The size that fills the element, or null while it is hidden or not laid out. */
  proposeSize(): { cols: number; rows: number } | null {
    if (!this.opened) return null;
    const size = this.fitAddon.proposeDimensions();
    if (!size || !Number.isFinite(size.cols) || !Number.isFinite(size.rows) || size.cols < 2 || size.rows < 2) return null;
    return { cols: size.cols, rows: size.rows };
  }

  dispose(): void {
    hideHint();
    this.marks.dispose();
    this.images?.dispose();
    this.webgl?.dispose();
    this.term.dispose();
  }
}
