/**
 * `Tandem --mcp [--name NAME]`: the app binary started as the agents' stdio bridge. The browser
 * process cannot serve stdio on Windows (its process.stdin only ends), so it starts itself again
 * as Node running the CLI, with the same stdio, and exits with that process's code.
 */
export interface McpRelaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The bridge's CLI arguments when argv asks for `--mcp`, else null. Chromium switches before it are ignored. */
export function mcpArgs(argv: readonly string[]): string[] | null {
  const at = argv.indexOf('--mcp');
  if (at < 0) return null;
  const nameAt = argv.indexOf('--name', at);
  const name = nameAt > at ? argv[nameAt + 1] : undefined;
  return name !== undefined && !name.startsWith('--') ? ['mcp', '--name', name] : ['mcp'];
}

export function mcpRelaunch(opts: { execPath: string; binScript: string; cliArgs: string[]; env: NodeJS.ProcessEnv }): McpRelaunch {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(opts.env)) if (value !== undefined) env[key] = value;
  env.ELECTRON_RUN_AS_NODE = '1';
  return { command: opts.execPath, args: [opts.binScript, ...opts.cliArgs], env };
}
