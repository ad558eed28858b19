/**
 * The desktop window never opens a window of its own (a page there would run outside the CSP
 * and the IPC sender checks). A web link the person Ctrl/Cmd+clicked in a terminal reaches here
 * as `window.open`: http and https go to the system browser (`shell.openExternal`, passed in so
 * a test runs this without Electron), every other scheme nowhere.
 */
import { webUrl } from '../../shared/web-url.js';

export function windowOpenHandler(openExternal: (url: string) => Promise<void>): (details: { url: string }) => { action: 'deny' } {
  return ({ url }) => {
    const href = webUrl(url);
    if (href) openExternal(href).catch(() => undefined);
    return { action: 'deny' };
  };
}
