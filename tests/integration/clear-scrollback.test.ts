/**
 * The menu's Clear through the host (issue 28, point 10): `clearScrollback` erases the host's
 * copy, so every view and a reload (a fresh attach) show it cleared, with output offsets and
 * agents' cursors unchanged and nothing written to the shell. Real bash, real TerminalHost,
 * the UI's Dispatcher; each view is a real @xterm/headless fed the snapshot and frames in order.
 */
import xtermHeadless from '@xterm/headless';
import type { Terminal as HeadlessTerminal } from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import { Dispatcher, type UiClient } from '../../src/main/host/dispatch.js';
import type { EventPayload } from '../../src/shared/contract.js';
import { suiteHost } from './helpers.js';
import { until as untilFor } from '../support/until.js';

/** 3,000 lines into the host and two views: room for a machine with two CPU burners. */
const until = (check: () => boolean | Promise<boolean>, what: string) => untilFor(check, what, 120_000);

const { Terminal } = xtermHeadless as unknown as { Terminal: typeof HeadlessTerminal };

function rowsOf(terminal: HeadlessTerminal): string[] {
  const buffer = terminal.buffer.active;
  const rows: string[] = [];
  for (let y = 0; y < buffer.length; y++) rows.push(buffer.getLine(y)?.translateToString(true).trimEnd() ?? '');
  while (rows.length > 0 && rows.at(-1) === '') rows.pop();
  return rows;
}

/** One page's view of one terminal: the snapshot, then every frame in order, acknowledged. */
class View {
  readonly term = new Terminal({ cols: 80, rows: 24, scrollback: 100_000, allowProposedApi: true });
  readonly dispatcher: Dispatcher;
  private attachmentId = '';
  private written = Promise.resolve();

  constructor(host: ConstructorParameters<typeof Dispatcher>[0], name: string) {
    const client: UiClient = {
      id: name,
      send: (event, payload) => {
        if (event !== 'output') return;
        const frame = payload as EventPayload<'output'>;
        if (frame.attachmentId !== this.attachmentId) return;
        this.write(frame.data);
        void this.dispatcher.call('ack', { attachmentId: frame.attachmentId, seq: frame.seq }).catch(() => undefined);
      },
    };
    this.dispatcher = new Dispatcher(host, client);
  }

  async attach(id: string): Promise<string> {
    const result = (await this.dispatcher.call('attach', { id, cols: 80, rows: 24 })) as { attachmentId: string; snapshot: string };
    this.attachmentId = result.attachmentId;
    this.write(result.snapshot);
    return result.snapshot;
  }

  private write(data: string): void {
    this.written = this.written.then(() => new Promise<void>((resolve) => this.term.write(data, resolve)));
  }

  async rows(): Promise<string[]> {
    await this.written;
    return rowsOf(this.term);
  }

  dispose(): void {
    this.dispatcher.dispose();
    this.term.dispose();
  }
}

const numberedRow = (row: string) => /^\d+$/.test(row);

describe('clearScrollback: the menu Clear for every view', () => {
  const suite = suiteHost('tandem-clear-');

  it('clears the host copy for every view and a reload, keeps offsets and agent cursors, and writes nothing to the shell', async () => {
    const host = suite.host;
    const { id } = await host.create({ shell: '/bin/bash', cols: 80, rows: 24 });
    const terminal = host.get(id);
    await until(() => terminal.session.status === 'idle', 'the prompt');
    const first = new View(host, 'first-page');
    const second = new View(host, 'second-page');
    await first.attach(id);
    await second.attach(id);
    const cursorBefore = terminal.session.cursor;
    await terminal.session.write('seq 1 3000\r');
    await until(
      async () => terminal.session.status === 'idle' && (await first.rows()).includes('3000') && (await second.rows()).includes('3000'),
      'the numbers in both views',
    );
    // Well past the hot window: some of it is in cold history.
    expect((await first.rows()).filter(numberedRow)).toHaveLength(3000);
    const promptRow = (await first.rows()).at(-1);
    const offset = terminal.session.streamOffset;
    const cursorAfterSeq = terminal.session.cursor;

    await first.dispatcher.call('clearScrollback', { id });
    await until(
      async () => (await first.rows()).filter(numberedRow).length === 0 && (await second.rows()).filter(numberedRow).length === 0,
      'both views cleared',
    );
    // The prompt line stays, at the top; no output was counted, no agent cursor moved.
    expect(terminal.session.streamOffset).toBe(offset);
    expect(terminal.session.cursor).toBe(cursorAfterSeq);
    const cleared = await first.rows();
    expect(cleared).toEqual([promptRow]);
    // A reload: a fresh attach gets the cleared screen, not the numbers.
    const reload = new View(host, 'reloaded-page');
    await reload.attach(id);
    expect(await reload.rows()).toEqual(cleared);
    // The agent-facing history is untouched: a read since a cursor before the Clear still has it.
    const since = await terminal.session.read({ since: cursorBefore, maxBytes: 262_144 });
    expect(since.text).toContain('2999\n3000');

    // The shell still works, and got no input from the Clear: a `read` waiting meanwhile reads only what is typed.
    await terminal.session.write('read -r line; echo "got:[$line]"\r');
    await until(() => terminal.session.status === 'waiting_input', 'read waiting');
    await first.dispatcher.call('clearScrollback', { id });
    await terminal.session.write('typed\r');
    await until(async () => (await reload.rows()).some((row) => row.startsWith('got:')), 'the answer of read');
    for (const view of [first, second, reload]) {
      const rows = await view.rows();
      expect(rows.filter((row) => row.startsWith('got:'))).toEqual(['got:[typed]']);
      expect(rows.filter(numberedRow)).toEqual([]);
    }
    // Every live view shows exactly what a fresh attach shows.
    await until(() => terminal.session.status === 'idle', 'the prompt after read');
    const fresh = new View(host, 'fresh-page');
    await fresh.attach(id);
    const expected = await fresh.rows();
    await until(
      async () => JSON.stringify(await first.rows()) === JSON.stringify(expected) && JSON.stringify(await second.rows()) === JSON.stringify(expected),
      'views equal to a fresh attach',
    );
    for (const view of [first, second, reload, fresh]) view.dispose();
  }, 120_000);

  it('refuses bad input with contract codes', async () => {
    const view = new View(suite.host, 'bad-input');
    await expect(view.dispatcher.call('clearScrollback', { id: '' })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(view.dispatcher.call('clearScrollback', {})).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(view.dispatcher.call('clearScrollback', { id: 'x'.repeat(65) })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(view.dispatcher.call('clearScrollback', { id: 'T1', all: true })).rejects.toMatchObject({ code: 'invalid_argument' });
    await expect(view.dispatcher.call('clearScrollback', { id: 'no-such-terminal' })).rejects.toMatchObject({ code: 'not_found' });
    view.dispose();
  });
});
