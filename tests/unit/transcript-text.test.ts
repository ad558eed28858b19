/** What a transcript tab's bar says (src/renderer/src/lib/transcript-text.ts), for each reason. */
import { describe, expect, it } from 'vitest';
import { transcriptText, whenText } from '../../src/renderer/src/lib/transcript-text';
import type { TerminalView } from '../../src/shared/contract';

const now = new Date(2026, 11, 2, 15, 30);
const at = new Date(2026, 11, 2, 14, 5).toISOString();
const base = {
  id: 'x',
  title: 't',
  origin: 'agent',
  agent: 'codex',
  agentConnected: false,
  control: 'user',
  shared: false,
  shell: 'bash',
  integration: true,
  pid: 1,
  cwd: '/w',
  cols: 80,
  rows: 24,
  status: 'exited',
  exitCode: null,
  lastCommand: null,
  handedTo: null,
  sandbox: null,
  program: null,
  agentListening: false,
} satisfies TerminalView;
const time = whenText(at, now);

describe('transcriptText', () => {
  it('names who closed it, how the shell ended, or the last session', () => {
    expect(transcriptText({ ...base, transcript: { reason: 'closed', by: 'codex', at } }, now)).toBe(`Closed by codex at ${time}`);
    expect(transcriptText({ ...base, exitCode: 3, transcript: { reason: 'exited', by: 'codex', at } }, now)).toBe(`Shell exited (code 3) at ${time}`);
    expect(transcriptText({ ...base, transcript: { reason: 'unattended', by: 'codex', at } }, now)).toBe(
      `Closed by Tandem at ${time}: codex had been gone for hours`,
    );
    expect(transcriptText({ ...base, transcript: { reason: 'restored', by: null, at } }, now)).toBe(`From the last session (${time})`);
    expect(transcriptText(base, now)).toBeNull();
  });

  it('adds the date to a time that is not today', () => {
    expect(whenText(at, now)).not.toMatch(/Dec/);
    expect(whenText(new Date(2026, 10, 20, 9, 0).toISOString(), now)).toMatch(/Nov/);
  });
});
