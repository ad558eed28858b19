import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolNames } from '../../src/main/agent/mcp/tool-defs.js';
import { Dispatcher, type UiClient } from '../../src/main/host/dispatch.js';
import { TerminalHost } from '../../src/main/host/host.js';
import { SettingsStore } from '../../src/main/host/settings-store.js';
import { caught } from '../support/caught.js';

/**
 * `openPath` (issue 28): a clicked path opens with the person's editor command, against real
 * bash's cwd and a real program (a script that records its argv); what a hostile page or agent
 * would try runs nothing.
 */
const client: UiClient = { id: 'ui', send: () => undefined };

describe('openPath: a clicked path in the editor of the settings', () => {
  let home: string;
  let workspace: string;
  let host: TerminalHost;
  let ui: Dispatcher;
  let id: string;
  let argvFile: string;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'tandem-open-path-int-'));
    workspace = join(home, 'project');
    mkdirSync(join(workspace, 'src'), { recursive: true });
    writeFileSync(join(workspace, 'src', 'cli.ts'), 'export {};\n');
    writeFileSync(join(workspace, '$(touch pwned); touch pwned2'), 'x');
    argvFile = join(home, 'argv.txt');
    // The "editor": one line per argument it received.
    const editor = join(home, 'editor.sh');
    writeFileSync(editor, `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done > '${argvFile}'\n`);
    chmodSync(editor, 0o755);
    host = new TerminalHost({
      env: { ...process.env, HOME: home, SHELL: '/bin/bash', ZDOTDIR: undefined, HISTFILE: undefined },
      home,
      settings: new SettingsStore(null),
    });
    ui = new Dispatcher(host, client);
    await ui.call('setSettings', { editorCommand: `${editor} --goto {path}:{line}:{column}` });
    id = ((await ui.call('create', { cwd: workspace, shell: 'bash' })) as { id: string }).id;
  });

  afterAll(async () => {
    ui?.dispose();
    await host?.shutdown();
    rmSync(home, { recursive: true, force: true });
  });

  async function argvAfter(run: () => Promise<unknown>): Promise<string[]> {
    rmSync(argvFile, { force: true });
    await run();
    await expect.poll(() => existsSync(argvFile), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => readFileSync(argvFile, 'utf8').endsWith('\n')).toBe(true);
    return readFileSync(argvFile, 'utf8').split('\n').slice(0, -1);
  }

  it("resolves against the terminal's cwd and runs the editor with the path and line", async () => {
    const argv = await argvAfter(() => ui.call('openPath', { id, path: 'src/cli.ts', line: 12 }));
    expect(argv).toEqual(['--goto', `${join(workspace, 'src', 'cli.ts')}:12:1`]);
  });

  it('passes a name full of shell syntax as one argument, and nothing in it runs', async () => {
    const name = '$(touch pwned); touch pwned2';
    const argv = await argvAfter(() => ui.call('openPath', { id, path: `./${name}`, line: 3, column: 5 }));
    expect(argv).toEqual(['--goto', `${join(workspace, name)}:3:5`]);
    expect(existsSync(join(workspace, 'pwned'))).toBe(false);
    expect(existsSync(join(workspace, 'pwned2'))).toBe(false);
    expect(existsSync(join(home, 'pwned'))).toBe(false);
  });

  it('takes no program from the call, and refuses what is not an existing file', async () => {
    rmSync(argvFile, { force: true });
    const canary = join(home, 'ran');
    // The editor comes from the settings only: a call naming one is refused outright.
    expect((await caught(() => ui.call('openPath', { id, path: 'src/cli.ts', command: `touch ${canary}` }))).code).toBe('invalid_argument');
    expect((await caught(() => ui.call('openPath', { id, path: 'src/cli.ts', editor: `touch ${canary}` }))).code).toBe('invalid_argument');
    expect((await caught(() => ui.call('openPath', { id, path: `src/missing.ts; touch ${canary}` }))).code).toBe('not_found');
    expect((await caught(() => ui.call('openPath', { id, path: 'src' }))).code).toBe('not_found');
    expect((await caught(() => ui.call('openPath', { id, path: '-e' }))).code).toBe('not_found');
    expect((await caught(() => ui.call('openPath', { id: 'nope', path: 'src/cli.ts' }))).code).toBe('not_found');
    expect(existsSync(canary)).toBe(false);
    expect(existsSync(argvFile)).toBe(false);
  });

  it('an editor command that cannot start is a clear error', async () => {
    await ui.call('setSettings', { editorCommand: join(home, 'no-such-editor') });
    const error = await caught(() => ui.call('openPath', { id, path: 'src/cli.ts' }));
    expect(error).toMatchObject({ code: 'not_found', message: expect.stringContaining('Check the editor command in Settings') });
  });

  it("hands the system's opener no file it could run: an agent's executable or script is refused, a document opens (black-box round 9)", async () => {
    const opened: string[] = [];
    const viaSystem = new Dispatcher(host, client, { opener: { systemOpen: async (path) => void opened.push(path) } });
    await viaSystem.call('setSettings', { editorCommand: '' });
    // What an agent writes and then prints as "see CHANGES and setup.js:3" for a click.
    writeFileSync(join(workspace, 'CHANGES'), '#!/bin/sh\ntouch ran\n', { mode: 0o755 });
    writeFileSync(join(workspace, 'setup.js'), 'WScript.Echo(1)\n');
    writeFileSync(join(workspace, 'build.command'), 'touch ran\n');
    writeFileSync(join(workspace, 'notes.md'), '# notes\n');
    // Behind a harmless name: a link as a cloned repository can hold one (round 10).
    symlinkSync('build.command', join(workspace, 'docs.md'));
    writeFileSync(join(workspace, 'report.js. '), 'x');
    for (const path of ['CHANGES', 'setup.js:3', 'build.command', 'docs.md', 'report.js. '])
      expect((await caught(() => viaSystem.call('openPath', { id, path: path.split(':')[0] }))).code, path).toBe('forbidden');
    expect(opened).toEqual([]);
    await viaSystem.call('openPath', { id, path: 'notes.md' });
    expect(opened).toEqual([join(workspace, 'notes.md')]);
    viaSystem.dispose();
  });

  it('is no tool of the agents: only a UI session (renderer IPC, or a browser tab logged in) reaches it', () => {
    expect(toolNames.some((name) => /open.*path|editor/i.test(name))).toBe(false);
  });
});
