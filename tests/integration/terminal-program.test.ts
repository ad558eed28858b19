/**
 * What tells terminals apart (`TerminalInfo.program`) and how the desktop app's notify and
 * attention operations reach the person and back, against a real TerminalHost and real bash.
 * The desktop side is a SMALL FAKE of `DesktopAttention` (no Electron runtime here).
 */
import { describe, expect, it } from 'vitest';
import type { EventName } from '../../src/shared/contract.js';
import { type DesktopAttention, Dispatcher, type UiClient } from '../../src/main/host/dispatch.js';
import { procfs, runs } from '../support/capabilities.js';
import { suiteHost } from './helpers.js';
import { until } from '../support/until.js';

describe('terminal program titles and desktop attention', () => {
  const suite = suiteHost('tandem-program-');

  // The foreground program's name comes from /proc (README: tab titles are Linux only).
  it.runIf(runs('terminal program names', procfs))(
    'names the foreground program, prefers a title the program set, and is null at the prompt (needs /proc)',
    async () => {
      const { id } = await suite.host.create({ shell: '/bin/bash' });
      const program = (): string | null => suite.host.list().find((terminal) => terminal.id === id)!.program;
      await until(() => suite.host.get(id).session.status === 'idle', 'the prompt');
      expect(program()).toBeNull();
      await suite.host.get(id).session.write('sleep 30\r');
      await until(() => program() === 'sleep', 'sleep as the program');
      await suite.host.get(id).session.signal('SIGINT');
      await until(() => program() === null, 'the prompt again');
      // An OSC 2 title wins over the foreground program, trimmed; the roster tells of the change.
      const rosters: Array<string | null> = [];
      const off = suite.host.onRoster((terminals) => rosters.push(terminals.find((terminal) => terminal.id === id)?.program ?? null));
      await suite.host.get(id).session.write("printf '\\033]2;  deploy: staging  \\007'\r");
      await until(() => rosters.includes('deploy: staging'), 'the OSC title in a roster');
      off();
      expect(program()).toBe('deploy: staging');
    },
    30_000,
  );

  it('routes notify and attention to the desktop, and a notification click back to that window only', async () => {
    const shown: Array<{ title: string; body: string; click: () => void }> = [];
    const counts: Array<[number, boolean]> = [];
    const desktop: DesktopAttention = {
      notify: (notification, onClick) => shown.push({ ...notification, click: onClick }),
      attention: (count, flash) => counts.push([count, flash]),
    };
    const events: Array<{ client: string; event: EventName; payload: unknown }> = [];
    const client = (name: string): UiClient => ({ id: name, send: (event, payload) => events.push({ client: name, event, payload }) });
    const first = new Dispatcher(suite.host, client('first'), { desktop });
    const second = new Dispatcher(suite.host, client('second'), { desktop });
    await first.call('notify', { title: 'codex asks to run a command', body: 'make', terminalId: 'T1' });
    await first.call('attention', { count: 2, flash: true });
    expect(shown.map(({ title, body }) => ({ title, body }))).toEqual([{ title: 'codex asks to run a command', body: 'make' }]);
    expect(counts).toEqual([[2, true]]);
    shown[0]!.click();
    expect(events.filter((entry) => entry.event === 'notificationClicked')).toEqual([
      { client: 'first', event: 'notificationClicked', payload: { terminalId: 'T1' } },
    ]);
    await expect(first.call('attention', { count: -1, flash: false })).rejects.toMatchObject({ code: 'invalid_argument' });

    // Without a desktop (tandem serve) the operations are refused with a reason.
    const browser = new Dispatcher(suite.host, client('browser'));
    await expect(browser.call('notify', { title: 'x', body: '', terminalId: 'T1' })).rejects.toMatchObject({
      code: 'invalid_argument',
      message: expect.stringContaining('desktop app'),
    });
    for (const dispatcher of [first, second, browser]) dispatcher.dispose();
  });
});
