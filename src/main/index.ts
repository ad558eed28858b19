import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, nativeTheme, Notification, session, shell, type WebPreferences } from 'electron';
import { createDesktopAttention } from './electron/attention';
import { electronSystemOpen } from './electron/system-open';
import { installIpcTransport } from './electron/ipc-transport';
import { InstanceConflictError } from './host/instance';
import { withoutAppImageEnv } from './launch/appimage-env';
import { binScriptOf, bridgeCommand } from './launch/bridge-command';
import { mcpArgs, mcpRelaunch } from './launch/mcp-mode';
import { which } from './shells/resolve';
import { palettes } from '../shared/palette';
import { type Runtime, startRuntime } from './runtime';
import { localStateDir } from './state-dir';
import { offerMoveToApplications } from './electron/app-location';
import { windowOpenHandler } from './electron/window-open';

const bridgeArgs = mcpArgs(process.argv);
const binScript = binScriptOf(app.getAppPath(), process.platform);
// Must precede the single-instance lock, which lives in the userData directory. The bridge
// mode keeps its own, so it never touches the window's profile.
app.setPath('userData', bridgeArgs ? join(localStateDir(), 'bridge-profile') : localStateDir());

const preloadPath = fileURLToPath(new URL('../preload/index.cjs', import.meta.url));
const rendererHtmlPath = fileURLToPath(new URL('../renderer/index.html', import.meta.url));
// Set by `electron-vite dev` to the Vite dev server; absent in built and packaged runs.
const devServerUrl = process.env.ELECTRON_RENDERER_URL;

// Same policy as the meta tag in src/renderer/index.html, which covers file:// loads that
// carry no response headers; frame-ancestors only works as a header.
const contentSecurityPolicy = [
  "default-src 'self'",
  // 'wasm-unsafe-eval' compiles WebAssembly (the sixel decoder of @xterm/addon-image), not JavaScript eval.
  "script-src 'self' 'wasm-unsafe-eval'",
  // The terminal view (xterm.js) sizes its rows and measures glyphs with inline styles.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const webPreferences = {
  preload: preloadPath,
  contextIsolation: true,
  nodeIntegration: false,
  sandbox: true,
  webSecurity: true,
} as const satisfies WebPreferences;

let mainWindow: BrowserWindow | null = null;
let runtime: Runtime | null = null;

// A bug in one request must not take every terminal down with the app.
process.on('unhandledRejection', (reason) => process.stderr.write(`Tandem: unexpected error (kept running): ${String(reason)}\n`));

if (bridgeArgs) {
  // `Tandem --mcp [--name NAME]`: run the bridge as Node with this process's stdio (see mcp-mode.ts).
  app.disableHardwareAcceleration();
  app.dock?.hide();
  const relaunch = mcpRelaunch({ execPath: process.execPath, binScript, cliArgs: bridgeArgs, env: process.env });
  const child = spawn(relaunch.command, relaunch.args, { env: relaunch.env, stdio: 'inherit', windowsHide: true });
  child.on('error', (error) => {
    process.stderr.write(`Tandem could not start its bridge: ${error.message}\n`);
    app.exit(1);
  });
  child.on('exit', (code) => app.exit(code ?? 1));
} else if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', focusMainWindow);
  app.on('web-contents-created', (_event, contents) => {
    // Any page change or popup would run outside the CSP and sender checks; the UI never needs one.
    contents.on('will-navigate', (event) => event.preventDefault());
    contents.on('will-attach-webview', (event) => event.preventDefault());
    // Web links the person clicked go to the system browser; no window opens here (window-open.ts).
    contents.setWindowOpenHandler(windowOpenHandler((url) => shell.openExternal(url)));
  });
  // Quit with the last window on macOS too: a terminal host with no window has no one to serve yet.
  app.on('window-all-closed', () => app.quit());
  void app.whenReady().then(async () => {
    hardenSession();
    try {
      runtime = await startRuntime({
        env: withoutAppImageEnv(process.env),
        port: 0,
        allowOrigins: [],
        trustLocalAgents: false,
        rendererDir: null,
        bridge: bridgeCommand({
          platform: process.platform,
          electron: true,
          packaged: app.isPackaged,
          execPath: process.execPath,
          binScript,
          appImage: process.env.APPIMAGE,
          nodeOnPath: app.isPackaged ? null : which('node'),
          tandemOnPath: false,
        }),
      });
    } catch (error) {
      const message = error instanceof InstanceConflictError ? error.message : `Tandem could not start: ${(error as Error).message}`;
      dialog.showErrorBox('Tandem', message);
      app.exit(1);
      return;
    }
    const desktop = createDesktopAttention({
      notification: Notification.isSupported() ? (options) => new Notification(options) : null,
      setBadgeCount: (count) => app.setBadgeCount(count),
      window: () => mainWindow,
    });
    // A clicked path with no editor command set opens as the system would open it.
    const opener = { systemOpen: electronSystemOpen((path) => shell.openPath(path)) };
    installIpcTransport({
      ipcMain,
      host: runtime.host,
      dispatch: { ...runtime.dispatch, desktop, opener },
      trustedUrl: devServerUrl ?? pathToFileURL(rendererHtmlPath).href,
    });
    createMainWindow();
    // Started from the disk image or a translocated copy: offer /Applications (a path that lasts).
    void offerMoveToApplications();
  });
  // Terminals are torn down (whole process trees) before the app goes.
  let stopped = false;
  app.on('before-quit', (event) => {
    if (stopped || !runtime) return;
    event.preventDefault();
    stopped = true;
    void runtime.stop().finally(() => app.quit());
  });
}

function hardenSession(): void {
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({
      responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [contentSecurityPolicy] },
    });
  });
  // Only the terminal's Paste (context menu, right-click) needs a permission: reading the
  // clipboard, for Tandem's own page. Camera, notifications and the rest stay denied.
  const uiUrl = devServerUrl ?? pathToFileURL(rendererHtmlPath).href;
  session.defaultSession.setPermissionRequestHandler((_contents, permission, callback, details) => {
    callback(permission === 'clipboard-read' && details.requestingUrl.split('#')[0] === uiUrl.split('#')[0]);
  });
}

function createMainWindow(): void {
  // The window's first paint is in the person's theme (the page reports the system's own later).
  runtime?.host.settings.setSystemAppearance(nativeTheme.shouldUseDarkColors);
  const appearance = runtime?.host.settings.appearance() ?? 'dark';
  const win = new BrowserWindow({
    width: 1200,
    height: 800,
    minWidth: 480,
    minHeight: 320,
    show: false,
    title: 'Tandem',
    backgroundColor: palettes[appearance].background,
    webPreferences,
  });
  mainWindow = win;
  win.on('closed', () => {
    if (mainWindow === win) mainWindow = null;
  });
  win.once('ready-to-show', () => win.show());
  if (process.env.TANDEM_E2E === '1') {
    win.webContents.once('did-finish-load', () => {
      reportReady(win).catch((error: unknown) => process.stderr.write(`TANDEM_E2E_ERROR ${String(error)}\n`));
    });
  }
  const loading = devServerUrl ? win.loadURL(devServerUrl) : win.loadFile(rendererHtmlPath);
  loading.catch((error: unknown) => process.stderr.write(`Tandem could not load its UI: ${String(error)}\n`));
}

function focusMainWindow(): void {
  if (!mainWindow) return;
  if (mainWindow.isMinimized()) mainWindow.restore();
  mainWindow.show();
  mainWindow.focus();
}

/**
 * The e2e handshake: one stdout line with the window's webPreferences and what the page
 * itself can reach, so a test sees isolation from inside the renderer, not just the config.
 */
async function reportReady(win: BrowserWindow): Promise<void> {
  const page: unknown = await win.webContents.executeJavaScript(
    `({ hasRequire: typeof require !== 'undefined', hasProcess: typeof process !== 'undefined', bridgeKeys: Object.keys(window.tandem ?? {}) })`,
  );
  const { preload: _preload, ...flags } = webPreferences;
  process.stdout.write(`TANDEM_READY ${JSON.stringify({ webPreferences: flags, page })}\n`);
}
