import type { TerminalView } from '../../../shared/contract';

/** A time of day, with the date when it is not today. */
export function whenText(iso: string, now: Date = new Date()): string {
  const at = new Date(iso);
  const time = at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return at.toDateString() === now.toDateString() ? time : `${at.toLocaleDateString([], { month: 'short', day: 'numeric' })} ${time}`;
}

/** What the transcript tab's bar says about why the terminal ended; null for a live terminal. */
export function transcriptText(info: TerminalView, now?: Date): string | null {
  const t = info.transcript;
  if (!t) return null;
  const at = whenText(t.at, now);
  switch (t.reason) {
    case 'closed':
      return `Closed by ${t.by ?? 'an agent'} at ${at}`;
    case 'exited':
      return `Shell exited${info.exitCode === null ? '' : ` (code ${info.exitCode})`} at ${at}`;
    case 'unattended':
      return `Closed by Tandem at ${at}: ${t.by ?? 'its agent'} had been gone for hours`;
    case 'restored':
      return `From the last session (${at})`;
  }
}
