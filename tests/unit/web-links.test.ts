/** Which links a click hands to a browser, and what the desktop window does with window.open. */
import { describe, expect, it } from 'vitest';
import { windowOpenHandler } from '../../src/main/electron/window-open.js';
import { hyperlinkHint } from '../../src/renderer/src/terminal/links.js';
import { shortTarget, webUrl } from '../../src/shared/web-url.js';

describe('web links', () => {
  it('are http and https only, as the URL parser reads them', () => {
    expect(webUrl('https://example.com/a?b#c')).toBe('https://example.com/a?b#c');
    expect(webUrl('HTTP://Example.com')).toBe('http://example.com/');
    for (const refused of ['javascript:alert(1)', 'file:///etc/passwd', 'vscode://file/x', 'ms-settings:', 'data:text/html,x', 'not a url', '//x.com', ''])
      expect(webUrl(refused), refused).toBeNull();
    expect(webUrl(`https://x.com/${'a'.repeat(9000)}`)).toBeNull();
  });

  it("a program's hyperlink hint names its target, not its text", () => {
    expect(hyperlinkHint('https://evil.example/steal', false)).toBe('Ctrl+click to open https://evil.example/steal');
    expect(hyperlinkHint('https://evil.example/steal', true)).toBe('⌘+click to open https://evil.example/steal');
    expect(hyperlinkHint('file:///etc/passwd', false)).toBe('Not a web link, not opened: file:///etc/passwd');
    const long = `https://x.com/${'a'.repeat(200)}/end-of-it`;
    expect(shortTarget(long)).toHaveLength(96);
    expect(shortTarget(long).endsWith('/end-of-it')).toBe(true);
  });

  it('the desktop window opens no window, and gives only web links to the system browser', async () => {
    const opened: string[] = [];
    const handler = windowOpenHandler(async (url) => void opened.push(url));
    for (const url of ['https://example.com/docs', 'file:///etc/passwd', 'javascript:alert(1)', 'smb://host/share'])
      expect(handler({ url })).toEqual({ action: 'deny' });
    expect(opened).toEqual(['https://example.com/docs']);
    // A browser that fails to start is not an unhandled rejection.
    expect(windowOpenHandler(() => Promise.reject(new Error('no browser')))({ url: 'https://x.com' })).toEqual({ action: 'deny' });
  });
});
