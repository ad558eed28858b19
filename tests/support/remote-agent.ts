/**
 * An agent on the test box (tests/support/sshd.ts): a real MCP client whose stdio bridge
 * (`tandem mcp --name NAME`) runs as the box's user in `~/proj`, so it finds that user's daemon by
 * its own discovery, as a local agent finds a local Tandem. The box is this machine, so its
 * files are read here.
 */
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Sshd } from './sshd.js';

export interface RemoteAgent {
  readonly client: Client;
  /** A tool call's structured result with `isError`. */
  call(name: string, args?: Record<string, unknown>): Promise<{ isError: boolean } & Record<string, unknown>>;
  close(): Promise<void>;
}

/** Connects an agent named `name` on the box, after removing a token an earlier run left it. */
export async function connectRemoteAgent(sshd: Sshd, name: string): Promise<RemoteAgent> {
  sshd.run(`mkdir -p ~/proj && rm -f ~/.config/Tandem/agents/${name}.token`);
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: 'runuser',
      args: ['-u', sshd.user, '--', process.execPath, resolve(import.meta.dirname, '../../bin/tandem.js'), 'mcp', '--name', name],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: sshd.home },
      cwd: join(sshd.home, 'proj'),
      stderr: 'pipe',
    }),
  );
  return {
    client,
    async call(tool, args = {}) {
      const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 70_000 });
      return { isError: result.isError === true, ...(result.structuredContent as Record<string, unknown>) };
    },
    close: () => client.close().catch(() => undefined),
  };
}
