/** How an MCP client starts the stdio bridge: `tandem mcp` (npm) or `Tandem --mcp` (the app). */
export interface BridgeCommand {
  command: string;
  args: string[];
}

export interface ClientConfig {
  client: string;
  file: string;
  text: string;
}

function quoteShell(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * Ready-to-copy stdio configurations with the agent's token, for the clients people use. The
 * same shapes are documented in the README's "Pair your agent" section and checked there.
 */
export function clientConfigs(bridge: BridgeCommand, agentName: string, token: string): ClientConfig[] {
  const args = (client: string) => [...bridge.args, '--name', client];
  const json = (client: string) =>
    JSON.stringify({ mcpServers: { tandem: { command: bridge.command, args: args(client), env: { TANDEM_TOKEN: token } } } }, null, 2);
  const tomlArray = (values: string[]) => `[${values.map((value) => JSON.stringify(value)).join(', ')}]`;
  return [
    {
      client: 'Claude Code',
      file: 'terminal',
      text: `claude mcp add --scope user tandem --env TANDEM_TOKEN=${token} -- ${[bridge.command, ...args('claude-code')].map(quoteShell).join(' ')}`,
    },
    {
      client: 'Codex',
      file: '~/.codex/config.toml',
      text: `[mcp_servers.tandem]\ncommand = ${JSON.stringify(bridge.command)}\nargs = ${tomlArray(args('codex'))}\nenv = { TANDEM_TOKEN = ${JSON.stringify(token)} }\n`,
    },
    { client: 'Gemini CLI', file: '~/.gemini/settings.json', text: json('gemini-cli') },
    { client: 'Cursor', file: '~/.cursor/mcp.json', text: json('cursor') },
    { client: `Other MCP clients (${agentName})`, file: 'stdio server', text: `command: ${bridge.command}\nargs: ${args(agentName).join(' ')}\nenv: TANDEM_TOKEN=${token}` },
  ];
}
