import type { IDisposable, Terminal } from '@xterm/xterm';

/** Window manipulation reports (`CSI t`): sizes, positions, title and icon label. */
const windowReportParams = new Set([11, 13, 14, 15, 16, 18, 19, 20, 21]);

/** OSC colour numbers whose `?` payload asks the terminal to report a colour. */
const colorQueryOscs = [4, 10, 11, 12, 17, 19];

function firstParam(params: (number | number[])[]): number {
  const first = params[0];
  return Array.isArray(first) ? (first[0] ?? 0) : (first ?? 0);
}

/**
 * The host's emulator is the only answerer of terminal protocol requests: a second reply from
 * this view would reach the program as stray input (garbage in pwsh's prompt, a confused `read`).
 * These handlers take every request before xterm.js's own ones and answer nothing.
 */
export function swallowProtocolRequests(term: Terminal): IDisposable {
  const swallow = (): boolean => true;
  const parser = term.parser;
  const disposables: IDisposable[] = [
    // DSR: status (5n) and cursor position (6n), also the DEC forms (CSI ? 6 n).
    parser.registerCsiHandler({ final: 'n' }, swallow),
    parser.registerCsiHandler({ prefix: '?', final: 'n' }, swallow),
    // Device attributes: primary, secondary, tertiary.
    parser.registerCsiHandler({ final: 'c' }, swallow),
    parser.registerCsiHandler({ prefix: '>', final: 'c' }, swallow),
    parser.registerCsiHandler({ prefix: '=', final: 'c' }, swallow),
    // DECRQM: ANSI and DEC mode queries.
    parser.registerCsiHandler({ intermediates: '$', final: 'p' }, swallow),
    parser.registerCsiHandler({ prefix: '?', intermediates: '$', final: 'p' }, swallow),
    // XTVERSION.
    parser.registerCsiHandler({ prefix: '>', final: 'q' }, swallow),
    // Window reports only; title stack push/pop (22t/23t) still reach xterm.js.
    parser.registerCsiHandler({ final: 't' }, (params) => windowReportParams.has(firstParam(params))),
    // DECRQSS.
    parser.registerDcsHandler({ intermediates: '$', final: 'q' }, swallow),
    ...colorQueryOscs.map((ident) => parser.registerOscHandler(ident, (data) => data.split(';').includes('?'))),
  ];
  return { dispose: () => disposables.forEach((disposable) => disposable.dispose()) };
}
