import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { clientConfigs, quoteArg } from '../../src/main/agent/bridge/configs.js';
import { InstanceConflictError, InstanceLock } from '../../src/main/host/instance.js';
import { linuxStartTicks, ownerIsLive, parseLockOwner, processStartTime } from '../../src/main/host/process-start.js';
import { command, procfs, runs } from '../support/capabilities.js';

// Linux's own format: clock ticks from /proc/<pid>/stat (elsewhere the OS reports a date).
const procStartTimes = runs('start times read from /proc', procfs);

const dirs: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-install-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('the instance lock records pid and start time', () => {
  it('parses old and new lock files, and tells a reused pid from its owner', () => {
    expect(parseLockOwner('1234\n')).toEqual({ pid: 1234, started: null });
    expect(parseLockOwner('{"pid":55,"started":"9001"}')).toEqual({ pid: 55, started: '9001' });
    expect(parseLockOwner('{"pid":-1}')).toBeNull();
    const alive = () => true;
    expect(ownerIsLive({ pid: 55, started: '9001' }, alive, () => '9001')).toBe(true);
    expect(ownerIsLive({ pid: 55, started: '9001' }, alive, () => '12')).toBe(false);
    expect(ownerIsLive({ pid: 55, started: '9001' }, alive, () => null)).toBe(true);
    expect(
      ownerIsLive(
        { pid: 55, started: '9001' },
        () => false,
        () => '9001',
      ),
    ).toBe(false);
  });

  it.runIf(procStartTimes)('reads start times from /proc, even past a name with spaces and parentheses', () => {
    expect(linuxStartTicks('42 (a b) c) S 1 42 42 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 777 0 0')).toBe('777');
    expect(processStartTime(process.pid)).toMatch(/^\d+$/);
  });

  it.runIf(runs('a lock whose pid was reused', command('sleep')))(
    'a lock left by a crash whose pid now names another process is taken over; the live owner is refused',
    async () => {
      const home = scratch();
      const env = { ...process.env, TANDEM_HOME: home };
      // A live process standing in for one that reused the dead owner's pid.
      const other = spawn('sleep', ['30']);
      await new Promise((resolve) => other.once('spawn', resolve));
      try {
        writeFileSync(join(home, 'instance.lock'), JSON.stringify({ pid: other.pid, started: 'a-process-that-died' }));
        const lock = new InstanceLock(env);
        expect(() => lock.acquire()).not.toThrow();
        lock.release();
        writeFileSync(join(home, 'instance.lock'), JSON.stringify({ pid: other.pid, started: processStartTime(other.pid!) }));
        expect(() => new InstanceLock(env).acquire()).toThrow(InstanceConflictError);
      } finally {
        other.kill();
      }
    },
  );
});

describe('pairing snippets', () => {
  const bridge = {
    command: 'C:\\Program Files\\Tandem\\Tandem.exe',
    args: ['C:\\Program Files\\Tandem\\resources\\app.asar\\bin\\tandem.js', 'mcp'],
    env: { ELECTRON_RUN_AS_NODE: '1' },
  };

  it('quote for the shell they are pasted into', () => {
    expect(quoteArg("it's", 'linux')).toBe(`'it'\\''s'`);
    expect(quoteArg('C:\\Program Files\\x.exe', 'win32')).toBe('"C:\\Program Files\\x.exe"');
    expect(quoteArg('/usr/bin/node', 'linux')).toBe('/usr/bin/node');
  });

  it('name the agent as the person did in every client, and carry every variable the bridge needs', () => {
    const configs = clientConfigs(bridge, 'my agent', 'tdm_x', 'win32');
    for (const config of configs) {
      expect(config.text).toContain('my agent');
      expect(config.text).toContain('ELECTRON_RUN_AS_NODE');
      expect(config.text).toContain('tdm_x');
    }
    expect(configs.find((c) => c.client === 'Claude Code')!.text).toBe(
      'claude mcp add --scope user tandem -e TANDEM_TOKEN=tdm_x -e ELECTRON_RUN_AS_NODE=1 -- "C:\\Program Files\\Tandem\\Tandem.exe" "C:\\Program Files\\Tandem\\resources\\app.asar\\bin\\tandem.js" mcp --name "my agent"',
    );
  });

  it('give JSON clients one entry to merge into mcpServers, never a whole file', () => {
    const cursor = clientConfigs(bridge, 'my-agent', 'tdm_x', 'win32').find((c) => c.client === 'Cursor')!;
    expect(cursor.file).toMatch(/mcpServers/);
    expect(cursor.text.trimStart().startsWith('"tandem": {')).toBe(true);
    const merged = JSON.parse(`{ "mcpServers": { "other": { "command": "x" }, ${cursor.text} } }`) as { mcpServers: Record<string, unknown> };
    expect(merged.mcpServers).toEqual({
      other: { command: 'x' },
      tandem: { command: bridge.command, args: [...bridge.args, '--name', 'my-agent'], env: { TANDEM_TOKEN: 'tdm_x', ELECTRON_RUN_AS_NODE: '1' } },
    });
  });
});
