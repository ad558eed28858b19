/**
 * Which links a click may hand to a browser: http and https only, as the URL parser reads
 * them (no `javascript:`, `file:`, custom schemes an installed program registered, nor text that
 * does not parse). Shared by the renderer's link handlers (a printed URL, a program's OSC 8
 * hyperlink) and the desktop app's window-open handler, which gives these to the system browser
 * and nothing else.
 */
export function webUrl(text: string): string | null {
  if (text.length > 8192) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
}

/** A long target shortened for a hint: its start and its end, with an ellipsis between. */
export function shortTarget(href: string, max = 96): string {
  return href.length <= max ? href : `${href.slice(0, max - 25)}…${href.slice(-24)}`;
}
