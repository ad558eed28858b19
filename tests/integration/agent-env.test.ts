/**
 * Environment by allow list (issue 23): an agent terminal gets named variables of the host's
 * environment, not "everything minus secret names". The host runs with secrets under both
 * well-known and odd names; an agent's `env` (through the official MCP SDK client, confined and
 * not, bash, zsh and pwsh) shows none of them, the person's own terminal shows all of them,
 * and a name the person adds in settings reaches the agent.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentFixture, startAgentFixture } from './agent-helpers.js';
import { findPwsh } from './pwsh-helpers.js';
import { sandboxAvailable } from './sandbox-helpers.js';

const secrets = {
  MY_API_KEY: 'CANARY-api-key',
  AWS_SECRET_ACCESS_KEY: 'CANARY-aws',
  GITHUB_TOKEN: 'CANARY-github',
  // No credential word at the end: a deny list by name let this one through.
  FOO_PASSWD_X: 'CANARY-odd-name',
  SSH_AUTH_SOCK: '/tmp/CANARY-agent.sock',
  DISPLAY: ':CANARY',
};

const pwsh = findPwsh();
if (!pwsh) console.warn('agent-env test: pwsh cases skipped, pwsh is not installed.');
const shells = ['bash', 'zsh', ...(pwsh ? ['pwsh'] : [])];

/** Polls `check` until it holds; the bound catches a hang, not slowness. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

let f: AgentFixture;
let openToken: string;
let confinedToken: string;

beforeAll(async () => {
  const path = pwsh ? `${process.env.PATH}:${join(pwsh, '..')}` : (process.env.PATH ?? '');
  f = await startAgentFixture({ defaultSandbox: 'off', env: { ...secrets, PATH: path, MY_TOOL_HOME: '/opt/allowed-tool' } });
  openToken = f.layer.pairAgent({ name: 'unconfined' }).token;
  f.layer.setAgentPolicy({ name: 'unconfined', policy: 'always' });
  confinedToken = f.layer.pairAgent({ name: 'confined' }).token;
  f.layer.setAgentPolicy({ name: 'confined', policy: 'always', ...(sandboxAvailable ? { sandbox: 'workspace-write' } : {}) });
});
afterAll(async () => {
  await f?.close();
});

async function agentEnv(token: string, shell: string): Promise<string> {
  const client = await f.client(token);
  const { id } = (await f.call(client, 'terminal_open', { title: 'env', shell })) as { id: string };
  try {
    const result = await f.call(client, 'terminal_send', { id, text: 'env', maxOutputBytes: 262_144, waitMs: 30_000 });
    expect(result).toMatchObject({ status: 'done', exitCode: 0, truncated: null });
    return result.output as string;
  } finally {
    await f.host.close(id);
  }
}

describe('agent terminals get an allow-listed environment', () => {
  it.each(
    shells.flatMap((shell) => [
      [shell, 'unconfined'],
      [shell, 'confined'],
    ]),
  )('%s %s: no secret of the host, whatever its name', async (shell, who) => {
    if (who === 'confined' && !sandboxAvailable) console.warn('agent-env test: bubblewrap missing, the confined case runs unconfined.');
    const output = await agentEnv(who === 'confined' ? confinedToken : openToken, shell);
    expect(output).not.toContain('CANARY');
    for (const name of Object.keys(secrets)) expect(output).not.toMatch(new RegExp(`^${name}=`, 'm'));
    expect(output).not.toMatch(/^MY_TOOL_HOME=/m);
    // What the shell and the integration need is there.
    expect(output).toMatch(/^PATH=/m);
    expect(output).toMatch(/^HOME=/m);
    expect(output).toMatch(/^TERM=xterm-256color$/m);
    expect(output).toMatch(/^TERM_PROGRAM=Tandem$/m);
    expect(output).toMatch(/^TANDEM_TERMINAL_ID=/m);
    expect(output).toContain('GIT_PAGER=cat');
    if (who === 'confined' && sandboxAvailable) expect(output).toMatch(/^TANDEM_SANDBOX=workspace-write$/m);
  });

  it("the person's own terminal keeps the full environment", async () => {
    const out = join(f.root, 'person-env');
    const view = await f.host.create({ origin: 'user', shell: 'bash', cwd: f.project });
    const { attachment } = await f.host.attach(view.id, 'person-ui', { frame: () => undefined, closed: () => undefined, writable: () => undefined });
    await until(() => f.host.list().find((t) => t.id === view.id)?.status === 'idle', 'the person’s shell prompt');
    await f.host.input(attachment.id, `env > ${out}.tmp && mv ${out}.tmp ${out}\r`, true, 'person-ui');
    await until(() => existsSync(out), 'the person’s env output');
    const text = readFileSync(out, 'utf8');
    for (const [name, value] of Object.entries(secrets)) expect(text).toContain(`${name}=${value}`);
    await f.host.close(view.id);
  });

  it.each(shells)('%s: a name the person adds in settings reaches the agent; a bad list is refused', async (shell) => {
    expect(() => f.host.settings.update({ agentEnvAllow: ['MY_TOOL_HOME=x'] })).toThrow(/agentEnvAllow/);
    expect(() => f.host.settings.update({ agentEnvAllow: Array.from({ length: 65 }, (_, i) => `V${i}`) })).toThrow(/agentEnvAllow/);
    f.host.settings.update({ agentEnvAllow: ['MY_TOOL_HOME', 'FOO_PASSWD_X'] });
    try {
      const output = await agentEnv(openToken, shell);
      expect(output).toMatch(/^MY_TOOL_HOME=\/opt\/allowed-tool$/m);
      expect(output).toMatch(/^FOO_PASSWD_X=CANARY-odd-name$/m);
      expect(output).not.toMatch(/^GITHUB_TOKEN=/m);
    } finally {
      f.host.settings.update({ agentEnvAllow: [] });
    }
  });
});
