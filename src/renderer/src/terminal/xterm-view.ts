import { FitAddon } from '@xterm/addon-fit';
import { SearchAddon } from '@xterm/addon-search';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { WebglAddon } from '@xterm/addon-webgl';
import { Terminal } from '@xterm/xterm';
import { type Appearance, defaultSettings, type Settings } from '../../../shared/settings';
import { swallowProtocolRequests } from './protocol-guard';
import { xtermTheme } from './theme';

/** The host's pseudoconsole when it runs on Windows (its `environment`); set before views attach. */
let hostWindowsPty: { backend: 'conpty'; buildNumber: number } | undefined;

export function setHostWindowsPty(info: typeof hostWindowsPty): void {
  hostWindowsPty = info;
}

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
  private opened = false;

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
      minimumContrastRatio: 1,
      // ConPTY repaints on resize: without this xterm reflows too and lines are doubled.
      windowsPty: hostWindowsPty,
    });
    swallowProtocolRequests(this.term);
    this.term.loadAddon(new Unicode11Addon());
    // Same width tables as the host's emulator, so cursor positions agree on emoji and CJK.
    this.term.unicode.activeVersion = '11';
    this.term.loadAddon(this.fitAddon);
    this.term.loadAddon(this.search);
    this.term.loadAddon(
      new WebLinksAddon((event, uri) => {
        // A plain click selects text as usual; Ctrl/Cmd+click follows the link.
        if (!event.ctrlKey && !event.metaKey) return;
        window.open(uri, '_blank', 'noopener,noreferrer');
      }),
    );
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
    if (this.appearance !== appearance) {
      this.appearance = appearance;
      options.theme = xtermTheme(appearance);
    }
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
    this.webgl?.dispose();
    this.term.dispose();
  }
}
