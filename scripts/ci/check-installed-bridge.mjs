#!/usr/bin/env node
// CI check for an installed Tandem: starts the app with a private TANDEM_HOME holding one paired
// agent, then starts the stdio bridge exactly as an agent's configuration would and drives a
// terminal through it with the official MCP SDK client.
//
//   node scripts/ci/check-installed-bridge.mjs --app <binary> [--app-arg A]... [--env K=V]... -- <bridge command> [args...]
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const split = process.argv.indexOf('--');
if (split < 0) throw new Error('usage: --app <binary> [--app-arg A]... [--env K=V]... -- <bridge command> [args...]');
const { values } = parseArgs({
  args: process.argv.slice(2, split),
  options: { app: { type: 'string' }, 'app-arg': { type: 'string', multiple: true }, env: { type: 'string', multiple: true } },
});
const [command, ...args] = process.argv.slice(split + 1);
const home = mkdtempSync(join(tmpdir(), 'tandem-installed-'));
const token = `tdm_${randomBytes(24).toString('base64url')}`;
writeFileSync(
  join(home, 'agents.json'),
  JSON.stringify({
    agents: [{ name: 'ci', tokenHash: createHash('sha256').update(token).digest('hex'), createdAt: new Date().toISOString(), settings: { policy: 'always' } }],
  }),
  { mode: 0o600 },
);

const app = spawn(values.app, values['app-arg'] ?? [], { env: { ...process.env, TANDEM_HOME: home }, stdio: ['ignore', 'inherit', 'inherit'] });
const fail = (message) => {
  console.error(`installed bridge check: ${message}`);
  app.kill();
  process.exit(1);
};
app.on('exit', (code) => fail(`the app exited early (code ${code})`));

const deadline = Date.now() + 60_000;
while (!existsSync(join(home, 'instance.json'))) {
  if (Date.now() > deadline) fail('the app did not publish instance.json within 60 s');
  await new Promise((resolve) => setTimeout(resolve, 250));
}

// The SDK passes a minimal environment: add the display, which `--mcp` on Linux needs.
const env = { TANDEM_HOME: home, TANDEM_TOKEN: token };
for (const key of ['DISPLAY', 'XAUTHORITY', 'WAYLAND_DISPLAY', 'XDG_RUNTIME_DIR']) if (process.env[key]) env[key] = process.env[key];
for (const pair of values.env ?? []) env[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1);
const client = new Client({ name: 'tandem-ci', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command, args, env, stderr: 'inherit' }));
const tools = (await client.listTools()).tools.map((tool) => tool.name);
if (!tools.includes('terminal_send')) fail(`tools/list lacks terminal_send: ${tools.join(', ')}`);
const opened = await client.callTool({ name: 'terminal_open', arguments: { title: 'ci' } });
const id = opened.structuredContent?.id;
if (!id) fail(`terminal_open failed: ${JSON.stringify(opened)}`);
const sent = await client.callTool({ name: 'terminal_send', arguments: { id, text: 'echo installed-bridge-ok' } });
if (sent.structuredContent?.status !== 'done' || sent.structuredContent?.output !== 'installed-bridge-ok')
  fail(`terminal_send: ${JSON.stringify(sent.structuredContent)}`);
await client.callTool({ name: 'terminal_close', arguments: { id } });
await client.close();
app.removeAllListeners('exit');
app.kill();
rmSync(home, { recursive: true, force: true });
console.log(`installed bridge check passed: ${command} ${args.join(' ')}`);
