/** Typed input as the terminal echoes it, and removing that echo from a command's output. */
import { AnsiScanner, type AnsiSink } from './ansi';
import { isLowSurrogate, trimSpaces } from './projection-lines';

/**
 * Removes a leading echo of `sent` (the terminal echoes typed input, Enter as
 * \r\n) from projected output. Output that is only the start of the echo (the
 * rest has not arrived yet) becomes ''.
 */
export function stripEcho(output: string, sent: string): string {
  const echo = echoOf(sent);
  if (echo === '') return output;
  if (output.startsWith(echo)) {
    const rest = output.slice(echo.length);
    // Input without Enter leaves the cursor on the echo line; the program's newline ends it.
    return !echo.endsWith('\n') && rest.startsWith('\n') ? rest.slice(1) : rest;
  }
  if (echo.startsWith(output)) return '';
  return output;
}

/** What the tty shows for typed input: Enter (CR, LF, CRLF) as a line break, BS/DEL erasing. */
function echoOf(sent: string): string {
  const lines: string[] = [];
  let cur = '';
  const sink: AnsiSink = {
    text(s, start, end) {
      const t = s.slice(start, end).split(/\r*\n/);
      cur += t[0];
      for (let k = 1; k < t.length; k++) {
        lines.push(trimSpaces(cur));
        cur = t[k]!;
      }
    },
    control(code) {
      if (code === 0x0d || code === 0x0a) {
        lines.push(trimSpaces(cur));
        cur = '';
      } else if ((code === 0x08 || code === 0x7f) && cur !== '') {
        cur = cur.slice(0, isLowSurrogate(cur.charCodeAt(cur.length - 1)) ? -2 : -1);
      }
    },
    csi() {},
    esc() {},
  };
  new AnsiScanner(sink).feed(sent);
  lines.push(trimSpaces(cur));
  return lines.join('\n');
}
