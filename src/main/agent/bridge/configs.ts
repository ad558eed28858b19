/**
 * How an MCP client starts the stdio bridge on this machine (src/main/launch/bridge-command.ts
 * decides it per kind of install): a command, its arguments, and variables it needs besides the
 * agent's token (ELECTRON_RUN_AS_NODE for the app binary).
 */
import { bridgeLocation, moveInstruction } from '../../launch/app-location.js';
import type { BridgeCommand } from '../../launch/bridge-command.js';

export interface ClientConfig {
  client: string;
  /** Where the text goes: `terminal` (a command to run) or a file to merge the entry into. */
  file: string;
  text: string;
}

/** Quoting for the shell the person pastes into: POSIX sh, or cmd and PowerShell on Windows. */
export function quoteArg(value: string, platform: NodeJS.Platform): string {
  if (/^[\w@%+=:,./-]+$/.test(value)) return value;
  if (platform === 'win32') return `"${value.replace(/"/g, '""')}"`;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * Ready-to-copy configurations with the agent's token, for the clients people use: each
 * client's own `mcp add` command where it has one, and for JSON files the one entry to merge
 * into `mcpServers` (never a whole file, which would drop the person's other servers). Every
 * one names the agent as the person did. tests/e2e/agent-clis.test.ts runs them with the real CLIs.
 */
export function clientConfigs(bridge: BridgeCommand, agentName: string, token: string, platform: NodeJS.Platform = process.platform): ClientConfig[] {
  // A disk image or a translocated copy is gone after this run: no configuration names it.
  const temporary = bridgeLocation(bridge, platform);
  if (temporary) return [{ client: 'Move Tandem to Applications first', file: 'instruction', text: moveInstruction(temporary) }];
  const q = (value: string) => quoteArg(value, platform);
  const args = [...bridge.args, '--name', agentName];
  const env = { TANDEM_TOKEN: token, ...bridge.env };
  const envFlags = (flag: string) =>
    Object.entries(env)
      .map(([key, value]) => `${flag} ${q(`${key}=${value}`)}`)
      .join(' ');
  const line = (values: string[]) => values.map(q).join(' ');
  const entry = JSON.stringify({ tandem: { command: bridge.command, args, env } }, null, 2);
  return [
    {
      client: 'Claude Code',
      file: 'terminal',
      text: `claude mcp add --scope user tandem ${envFlags('-e')} -- ${line([bridge.command, ...args])}`,
    },
    {
      client: 'Codex',
      file: 'terminal',
      text: `codex mcp add tandem ${envFlags('--env')} -- ${line([bridge.command, ...args])}`,
    },
    {
      // Gemini's -e takes several values and would swallow the name; its own options would
      // swallow the bridge's `--name` without the `--` after the command.
      client: 'Gemini CLI',
      file: 'terminal',
      text: `gemini mcp add --scope user ${envFlags('-e')} tandem ${q(bridge.command)} -- ${line(args)}`,
    },
    {
      client: 'Cursor',
      file: '~/.cursor/mcp.json: add this entry inside "mcpServers"',
      text: entry.slice(2, -2).replace(/^ {2}/gm, ''),
    },
    {
      client: `Other MCP clients (${agentName})`,
      file: 'stdio server',
      text: `command: ${bridge.command}\nargs: ${line(args)}\nenv: ${Object.entries(env)
        .map(([key, value]) => `${key}=${value}`)
        .join(' ')}`,
    },
  ];
}
