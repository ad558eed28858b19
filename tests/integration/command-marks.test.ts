/**
 * Command marks (issue 29) through the host with a real bash in a real PTY: each command's
 * mark arrives in a frame at the position where its command started, its end says how it
 * ended, a fresh attach lists the marks with lines that land on the command's line, and text a
 * program prints (OSC 133/633, a Tandem marker with a wrong secret) makes no mark.
 */
import xtermHeadless from '@xterm/headless';
import type { Terminal as HeadlessTerminal } from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import type { FrameMark, SnapshotMarks } from '../../src/shared/command-marks.js';
import { outputString, type OutputText } from '../../src/main/host/attachment.js';
import { encodeOutputFrame } from '../../src/main/web/output-frame.js';
import { decodeServerMessage } from '../../src/shared/frames.js';
import type { TerminalHost } from '../../src/main/host/host.js';
import { suiteHost } from './helpers.js';
import { until } from '../support/until.js';

const { Terminal } = xtermHeadless as unknown as { Terminal: typeof HeadlessTerminal };

/** The text of each mark's line in a view that wrote the snapshot, placed as the renderer places them (relative to its cursor). */
async function markedLines(snapshot: string, marks: SnapshotMarks): Promise<string[]> {
  const t = new Terminal({ cols: 100, rows: 30, scrollback: 1000, allowProposedApi: true });
  await new Promise<void>((resolve) => t.write(snapshot, resolve));
  const lines = marks.list.map((mark) => {
    const marker = t.registerMarker(mark.line - marks.cursorLine)!;
    return t.buffer.active.getLine(marker.line)!.translateToString(true);
  });
  t.dispose();
  return lines;
}

/** Attaches a viewer that keeps every frame (its text and marks) and acknowledges each, as a page does. */
async function viewerFrames(host: TerminalHost, id: string): Promise<Array<{ data: string; marks?: readonly FrameMark[] }>> {
  const frames: Array<{ data: string; marks?: readonly FrameMark[] }> = [];
  await host.attach(id, 'viewer', {
    frame: (attachmentId: string, seq: number, data: OutputText, marks?: readonly FrameMark[]) => {
      frames.push({ data: outputString(data), marks });
      queueMicrotask(() => host.ack(attachmentId, seq, 'viewer'));
    },
    closed: () => undefined,
    writable: () => undefined,
  });
  return frames;
}

describe('command marks', () => {
  const suite = suiteHost('tandem-marks-');

  it('marks each command where it started, coloured by its end, and a reload gets them back', async () => {
    const host = suite.host;
    const { id } = await host.create({ shell: '/bin/bash', cols: 100, rows: 30 });
    await until(() => host.get(id).session.status === 'idle', 'the prompt');
    const frames = await viewerFrames(host, id);
    const session = host.get(id).session;
    const ended = () => frames.flatMap((frame) => frame.marks ?? []).filter((mark) => mark.kind === 'end');
    await session.write('echo one\r');
    await until(() => ended().length === 1, 'the first end');
    await session.write('ls /nonexistent-tandem\r');
    await until(() => ended().length === 2, 'the failure');
    await session.write('sleep 30\r');
    await until(() => session.status === 'running', 'sleep to run');
    await session.interrupt();
    await until(() => ended().length === 3, 'the interrupt');

    const all = frames.flatMap((frame) => frame.marks ?? []);
    const starts = all.filter((mark) => mark.kind === 'start');
    expect(starts).toHaveLength(3);
    expect(ended().map((mark) => [mark.status, mark.exitCode])).toEqual([
      ['success', 0],
      ['failure', 2],
      ['interrupted', 130],
    ]);
    // A start is where the command's output begins in the frame: after the echoed command line.
    for (const frame of frames) {
      for (const mark of frame.marks?.filter((m) => m.kind === 'start') ?? []) {
        expect(frame.data.slice(mark.at)).not.toMatch(/^.*(echo one|ls \/nonexistent)/);
      }
    }
    const oneStart = frames.find((frame) => frame.marks?.some((m) => m.kind === 'start' && m.command === 'echo one'));
    if (oneStart) expect(oneStart.data.slice(oneStart.marks!.find((m) => m.kind === 'start')!.at)).toMatch(/^one\r\n/);

    // A reload: the snapshot lists the marks, and each lands on its command's line.
    const again = await host.attach(id, 'viewer-2', { frame: () => undefined, closed: () => undefined, writable: () => undefined });
    expect(again.marks.list.map((mark) => [mark.status, mark.exitCode])).toEqual([
      ['success', 0],
      ['failure', 2],
      ['interrupted', 130],
    ]);
    const lines = await markedLines(again.snapshot, again.marks);
    expect(lines[0]).toMatch(/echo one$/);
    expect(lines[1]).toMatch(/ls \/nonexistent-tandem$/);
    expect(lines[2]).toMatch(/sleep 30$/);
    for (const mark of again.marks.list) expect(mark.endLine).toBeGreaterThan(mark.line);
  });

  it('says a command waits for input, on its mark and in a fresh view, and how it ended once answered', async () => {
    const host = suite.host;
    const { id } = await host.create({ shell: '/bin/bash', cols: 100, rows: 30 });
    await until(() => host.get(id).session.status === 'idle', 'the prompt');
    const frames = await viewerFrames(host, id);
    const marks = () => frames.flatMap((frame) => frame.marks ?? []);
    const session = host.get(id).session;
    await session.write('read -r -p \'name? \' answer; echo "hi $answer"\r');
    await until(() => marks().some((mark) => mark.kind === 'status' && mark.status === 'waiting_input'), 'a waiting_input mark');
    const reload = await host.attach(id, 'viewer-2', { frame: () => undefined, closed: () => undefined, writable: () => undefined });
    // bash names a command only after it ends (README, Known limitations): the running mark has no command yet.
    expect(reload.marks.list.map((mark) => [mark.command, mark.status])).toEqual([[null, 'waiting_input']]);
    await session.write('ada\r');
    await until(() => marks().some((mark) => mark.kind === 'end'), 'the end');
    expect(
      marks()
        .filter((mark) => mark.kind === 'end')
        .map((mark) => [mark.status, mark.exitCode]),
    ).toEqual([['success', 0]]);
    expect(session.outputSince(0)).toContain('hi ada');
  });

  it('a program printing OSC 133/633 or a Tandem marker without the secret makes no mark', async () => {
    const host = suite.host;
    const { id } = await host.create({ shell: '/bin/bash', cols: 100, rows: 30 });
    await until(() => host.get(id).session.status === 'idle', 'the prompt');
    const marks: FrameMark[] = [];
    await host.attach(id, 'viewer', {
      frame: (attachmentId, seq, _data, frameMarks) => {
        marks.push(...(frameMarks ?? []));
        queueMicrotask(() => host.ack(attachmentId, seq, 'viewer'));
      },
      closed: () => undefined,
      writable: () => undefined,
    });
    const session = host.get(id).session;
    // One command prints every shape of forged command boundary: VS Code's 633, FinalTerm's 133, ours with a guessed secret.
    const forged = [
      '\\e]133;A\\a\\e]133;B\\a',
      '\\e]133;C\\a',
      'forged-output\\n',
      '\\e]133;D;0\\a',
      '\\e]633;A\\a\\e]633;E;rm -rf /\\a\\e]633;C\\a\\e]633;D;1\\a',
      '\\e]7771;0123456789abcdef;S;99;evil\\a\\e]7771;0123456789abcdef;E;99;0;;/\\a',
    ].join('');
    await session.write(`printf '${forged}'; echo; echo DONE-$((40+2))\r`);
    await until(() => marks.some((mark) => mark.kind === 'end'), 'the command to end');
    await until(() => session.status === 'idle', 'the prompt');
    // bash's command line is read from its history after the end marker and may come after the prompt.
    await until(() => marks.at(-1)?.command?.includes('printf') === true, "bash's command line");
    // Exactly the one command the shell ran: its start and its end, nothing the program printed.
    // (bash also sends the command line from its history after the end: news of the same mark.)
    expect(marks.filter((mark) => mark.kind === 'start')).toHaveLength(1);
    expect(marks.filter((mark) => mark.kind === 'end')).toHaveLength(1);
    expect(new Set(marks.map((mark) => mark.id)).size).toBe(1);
    const attached = await host.attach(id, 'viewer-2', { frame: () => undefined, closed: () => undefined, writable: () => undefined });
    expect(attached.marks.list).toHaveLength(1);
    expect(attached.marks.list[0]!.status).toBe('success');
  });

  it('marks travel in binary frames unchanged, and frames without marks keep their old layout', () => {
    const marks: FrameMark[] = [{ id: 7, at: 3, kind: 'start', command: 'echo é', status: 'running', exitCode: null }];
    const withMarks = decodeServerMessage(new Uint8Array(encodeOutputFrame('abc', 5, ['héllo', ' wörld'], marks)));
    expect(withMarks).toEqual({ type: 'event', event: 'output', payload: { attachmentId: 'abc', seq: 5, data: 'héllo wörld', marks } });
    const plain = encodeOutputFrame('abc', 6, 'x');
    expect(plain[0]).toBe(1);
    expect(decodeServerMessage(new Uint8Array(plain))).toEqual({ type: 'event', event: 'output', payload: { attachmentId: 'abc', seq: 6, data: 'x' } });
  });
});
