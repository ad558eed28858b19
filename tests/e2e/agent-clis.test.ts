/**
 * The ready-to-copy configurations, proven with the real agent CLIs (installed from the npm
 * registry by .ci/run into $TANDEM_AGENT_CLIS): each printed `mcp add` command is run exactly as
 * printed, in a shell, with a private HOME and no login; then Claude Code and Gemini CLI start
 * the stdio bridge and report it "Connected", and Codex lists it enabled with every argument and
 * variable. The MCP Inspector's CLI mode, a third-party client, lists and calls the tools.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { clientConfigs } from '../../src/main/agent/bridge/configs.js';
import { bridgeCommand } from '../../src/main/launch/bridge-command.js';
import { startAgentFixture } from '../integration/agent-helpers.js';

const binDir = process.env.TANDEM_AGENT_CLIS ? join(process.env.TANDEM_AGENT_CLIS, 'node_modules', '.bin') : null;
// Where .ci/run provides the CLIs, a missing one fails instead of skipping.
const has = (name: string) => binDir !== null && (existsSync(join(binDir, name)) || process.env.CI === 'true');
if (!binDir)
  console.warn(
    'agent CLI checks skipped: set TANDEM_AGENT_CLIS to a folder with @anthropic-ai/claude-code, @google/gemini-cli and @openai/codex installed (.ci/run does).',
  );

const cli = resolve(__dirname, '../../bin/tandem.js');
const token = 'tdm_example-token-for-config-checks';
// The bridge as an installed app prints it (`<app binary> <app>/bin/tandem.js mcp` with
// ELECTRON_RUN_AS_NODE=1), with this machine's node standing in for the app binary: node runs
// the same script and ignores the variable, so every argument and variable is exercised.
const bridge = bridgeCommand({
  platform: process.platform,
  electron: true,
  packaged: true,
  execPath: process.execPath,
  binScript: cli,
  appImage: undefined,
  nodeOnPath: null,
  tandemOnPath: false,
});
const agentName = 'my-agent';
const configs = clientConfigs(bridge, agentName, token);
const config = (client: string) => configs.find((entry) => entry.client === client)!.text;

const root = mkdtempSync(join(tmpdir(), 'tandem-clis-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function privateHome(name: string): { HOME: string; env: NodeJS.ProcessEnv } {
  const HOME = join(root, name);
  mkdirSync(HOME, { recursive: true });
  return { HOME, env: { PATH: `${binDir}:${process.env.PATH}`, HOME, TANDEM_HOME: join(HOME, 'tandem'), CI: '1', NO_COLOR: '1' } };
}

// Each CLI is a large Node program: two of its commands can take a minute apiece on a loaded machine.
describe('agent CLIs accept the printed configurations', { timeout: 300_000 }, () => {
  it.runIf(has('claude'))('Claude Code: `claude mcp add` as printed, then `claude mcp list` says Connected', () => {
    const { HOME, env } = privateHome('claude');
    const added = spawnSync('sh', ['-c', config('Claude Code')], { cwd: HOME, env, encoding: 'utf8', timeout: 60_000 });
    expect(added.status, added.stderr).toBe(0);
    const listed = execFileSync(join(binDir!, 'claude'), ['mcp', 'list'], { cwd: HOME, env, encoding: 'utf8', timeout: 90_000 });
    expect(listed).toMatch(/tandem:.*Connected/);
  });

  it.runIf(has('gemini'))('Gemini CLI: `gemini mcp add` as printed, then `gemini mcp list` says Connected', () => {
    const { HOME, env } = privateHome('gemini');
    const project = join(HOME, 'project');
    mkdirSync(join(HOME, '.gemini'), { recursive: true });
    mkdirSync(project);
    const added = spawnSync('sh', ['-c', config('Gemini CLI')], { cwd: project, env, encoding: 'utf8', timeout: 90_000 });
    expect(added.status, added.stderr).toBe(0);
    const settings = JSON.parse(readFileSync(join(HOME, '.gemini', 'settings.json'), 'utf8')) as { mcpServers: Record<string, unknown> };
    expect(settings.mcpServers.tandem).toEqual({
      command: bridge.command,
      args: [...bridge.args, '--name', agentName],
      env: { TANDEM_TOKEN: token, ...bridge.env },
    });
    // Gemini runs MCP servers only in folders the person trusts.
    writeFileSync(join(HOME, '.gemini', 'trustedFolders.json'), JSON.stringify({ [project]: 'TRUST_FOLDER' }));
    // Gemini prints the list on stderr.
    const listed = spawnSync(join(binDir!, 'gemini'), ['mcp', 'list'], { cwd: project, env, encoding: 'utf8', timeout: 90_000 });
    expect(`${listed.stdout}${listed.stderr}`).toMatch(/tandem:.*Connected/);
  });

  it.runIf(has('codex'))('Codex: `codex mcp add` as printed, then `codex mcp list` shows it enabled with its variables', () => {
    const { HOME, env } = privateHome('codex');
    const added = spawnSync('sh', ['-c', config('Codex')], { cwd: HOME, env, encoding: 'utf8', timeout: 60_000 });
    expect(added.status, added.stderr).toBe(0);
    const listed = execFileSync(join(binDir!, 'codex'), ['mcp', 'list'], { cwd: HOME, env, encoding: 'utf8', timeout: 60_000 });
    expect(listed).toMatch(
      new RegExp(`tandem\\s+\\S*node\\S*\\s+\\S*tandem\\.js mcp --name ${agentName}\\s+ELECTRON_RUN_AS_NODE=\\*+, TANDEM_TOKEN=\\*+.*enabled`),
    );
  });

  it.runIf(has('mcp-inspector'))('MCP Inspector (CLI mode) lists the tools and drives a terminal through the bridge', async () => {
    const { HOME, env } = privateHome('inspector');
    const f = await startAgentFixture({ tandemHome: join(HOME, 'tandem') });
    // One paired token: each Inspector call starts a new bridge, and they are the same agent.
    env.TANDEM_TOKEN = f.layer.pairAgent({ name: 'inspector' }).token;
    f.layer.setAgentPolicy({ name: 'inspector', policy: 'always' });
    try {
      const inspect = (...args: string[]) =>
        new Promise<string>((resolveRun, reject) => {
          execFile(
            join(binDir!, 'mcp-inspector'),
            ['--cli', process.execPath, cli, 'mcp', '--name', 'inspector', ...args],
            { cwd: HOME, env, encoding: 'utf8', timeout: 60_000 },
            (error, stdout) => (error ? reject(error) : resolveRun(stdout)),
          );
        });
      const tools = JSON.parse(await inspect('--method', 'tools/list')) as { tools: Array<{ name: string }> };
      expect(tools.tools.map((tool) => tool.name)).toContain('terminal_send');
      const opened = JSON.parse(await inspect('--method', 'tools/call', '--tool-name', 'terminal_open', '--tool-arg', 'title=inspector')) as {
        structuredContent: { id: string };
      };
      const sent = JSON.parse(
        await inspect(
          '--method',
          'tools/call',
          '--tool-name',
          'terminal_send',
          '--tool-arg',
          `id=${opened.structuredContent.id}`,
          '--tool-arg',
          'text=echo from-inspector',
        ),
      ) as {
        structuredContent: { status: string; output: string };
      };
      expect(sent.structuredContent).toMatchObject({ status: 'done', output: 'from-inspector' });
    } finally {
      await f.close();
    }
  });

  it("Cursor: the printed entry merged into a person's mcp.json keeps their other servers", () => {
    const existing = '{\n  "mcpServers": {\n    "other": { "command": "other-server" }\n  }\n}\n';
    const merged = existing.replace(/\n {2}}\n}\n$/, `,\n${config('Cursor')}\n  }\n}\n`);
    expect(JSON.parse(merged)).toEqual({
      mcpServers: {
        other: { command: 'other-server' },
        tandem: { command: bridge.command, args: [...bridge.args, '--name', agentName], env: { TANDEM_TOKEN: token, ...bridge.env } },
      },
    });
  });
});
