import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { serveEnv } from '../e2e/helpers/serve.js';

// A real `tandem serve` whose heap is capped at 64 MB, and the real `tandem mcp` bridge (both
// built by `npm test`'s pretest step). Before the /mcp fix every call kept about 8 KB on the
// host's heap until the session ended; at this cap that exhausted the heap within 5,000 calls.
const cli = resolve(__dirname, '../../bin/tandem.js');
const calls = 5_000;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function cappedHost(): Promise<{ child: ChildProcess; home: string; stderr: () => string }> {
  const home = mkdtempSync(join(tmpdir(), 'tandem-soak-'));
  const child = spawn(process.execPath, ['--max-old-space-size=64', cli, 'serve', '--port', '0', '--trust-local-agents'], {
    env: serveEnv(home),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (log = (log + chunk).slice(-8000)));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(home, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  });
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`tandem serve printed no login link within 60 s: ${log}`)), 60_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.includes('#login=')) return;
      clearTimeout(timer);
      ready();
    });
    child.once('exit', () => fail(new Error(`tandem serve exited while starting: ${log}`)));
  });
  return { child, home, stderr: () => log };
}

async function bridge(home: string): Promise<{ client: Client; stderr: () => string }> {
  const env = serveEnv(home);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp', '--name', 'soak'],
    env: { PATH: env.PATH ?? '', HOME: env.HOME!, TANDEM_HOME: home },
    stderr: 'pipe',
  });
  let log = '';
  (transport.stderr as NodeJS.ReadableStream | null)?.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
  const client = new Client({ name: 'soak', version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, stderr: () => log };
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 70_000 });
  const structured = result.structuredContent as Record<string, unknown>;
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(structured)}`);
  return structured;
}

describe('a host that runs for long', () => {
  // 3,000 lists took 8 s through one bridge at a load average of 5; this took 86 to 99 s at one above 20.
  it(`answers ${calls} tool calls through one bridge session with its heap capped at 64 MB`, { timeout: 240_000 }, async () => {
    const host = await cappedHost();
    const { client, stderr } = await bridge(host.home);
    const kept = String((await call(client, 'terminal_open', { title: 'soak' })).id);
    // Several calls in flight at once, as an agent's parallel tool calls are: the same session,
    // less wall time. Writes stay on one worker (one write per agent and terminal at a time).
    let made = 0;
    const worker = async (writer: boolean) => {
      while (made < calls) {
        made += 1;
        if (writer && made % 500 === 0) {
          // Now and then a terminal opened and closed, as agents do.
          const id = String((await call(client, 'terminal_open', { title: `soak ${made}` })).id);
          made += 1;
          expect(await call(client, 'terminal_close', { id })).toMatchObject({ closed: true });
        } else if (writer && made % 5 === 0) {
          expect(await call(client, 'terminal_send', { id: kept, text: 'true' })).toMatchObject({ status: 'done', exitCode: 0 });
        } else {
          expect((await call(client, 'terminal_list')).terminals).not.toHaveLength(0);
        }
      }
    };
    await Promise.all([worker(true), ...Array.from({ length: 7 }, () => worker(false))]);
    expect(made).toBeGreaterThanOrEqual(calls);
    expect(host.child.exitCode, host.stderr()).toBeNull();
    expect(await call(client, 'terminal_send', { id: kept, text: 'echo still-here' })).toMatchObject({ status: 'done', output: 'still-here' });
    expect(host.stderr()).not.toMatch(/heap out of memory|Warning/i);
    // The bridge's own growth (abort listeners) would show here as MaxListenersExceededWarning.
    expect(stderr()).not.toMatch(/Warning/i);
  });
});
