/**
 * Which bash a terminal runs when there are several (issue 26), through the real host and real
 * terminals: small scripts named bash report a version (3.2 on PATH, like macOS's /bin/bash; 5.2
 * in a Homebrew-like folder given by TANDEM_SHELL_SEARCH_DIRS) and exec this machine's bash with
 * TANDEM_FAKE_SHELL set, so the shell itself says which one was started.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TerminalHost } from '../../src/main/host/host.js';
import { bashDialect, bashLegacyDialect } from '../../src/main/shells/bash.js';
import { which } from '../../src/main/shells/resolve.js';
import { fakeShell, type FakeShell } from '../support/fake-shells.js';

const realBash = which('bash');

describe.runIf(realBash)('several bash binaries on one machine', () => {
  let root = '';
  let host: TerminalHost;
  let system: FakeShell;
  let brew: FakeShell;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'tandem-shell-choice-'));
    const runs = join(root, 'runs');
    system = fakeShell(root, 'system/bin/bash', 'system-bash', 'GNU bash, version 3.2.57(1)-release (arm64-apple-darwin23)', runs, { execs: realBash! });
    brew = fakeShell(root, 'homebrew/bin/bash', 'brew-bash', 'GNU bash, version 5.2.15(1)-release (aarch64-apple-darwin23.0.0)', runs, {
      execs: realBash!,
      cellar: 'homebrew/Cellar/bash/5.2.15/bin/bash',
    });
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: root,
      SHELL: system.path,
      PATH: `${join(root, 'system/bin')}:${process.env.PATH}`,
      TANDEM_SHELL_SEARCH_DIRS: join(root, 'homebrew/bin'),
      ZDOTDIR: undefined,
      HISTFILE: undefined,
    };
    delete env.TANDEM_BASH_INTEGRATION;
    host = new TerminalHost({ env, home: root });
  });
  afterAll(async () => {
    await host?.shutdown();
    rmSync(root, { recursive: true, force: true });
  });

  async function runs(id: string): Promise<string> {
    const result = await host.get(id).session.send({ text: 'echo "$TANDEM_FAKE_SHELL"', waitMs: 15_000 });
    expect(result.status).toBe('done');
    return result.output;
  }

  it('the host lists both, labelled, and its default is the 5.2 although SHELL names the 3.2', () => {
    const environment = host.environment();
    expect(environment.defaultShell).toEqual({ name: 'bash', path: brew.path, integration: true, label: 'bash 5.2 (Homebrew)' });
    const bashes = environment.shells.filter((shell) => shell.name === 'bash');
    expect(bashes).toEqual([
      { name: 'bash', path: brew.path, integration: true, label: 'bash 5.2 (Homebrew)' },
      { name: 'bash', path: system.path, integration: true, label: 'bash 3.2 (limited)' },
    ]);
  });

  it('a new terminal without a shell, and one asking for `bash`, run the 5.2 with the full integration', async () => {
    for (const shell of [undefined, 'bash']) {
      const view = await host.create({ shell, cols: 80, rows: 24 });
      expect(host.get(view.id).session.shell).toMatchObject({ path: brew.path, dialect: bashDialect });
      expect(await runs(view.id)).toBe('brew-bash');
    }
  });

  it('the 3.2 by its path runs that binary, with the legacy integration', async () => {
    const view = await host.create({ shell: system.path, cols: 80, rows: 24 });
    expect(host.get(view.id).session.shell).toMatchObject({ path: system.path, dialect: bashLegacyDialect });
    expect(await runs(view.id)).toBe('system-bash');
    expect((await host.get(view.id).session.send({ text: 'declare -F __tandem_debug', waitMs: 15_000 })).output).toBe('__tandem_debug');
  });
});

describe('this machine without TANDEM_SHELL_SEARCH_DIRS (Linux as before)', () => {
  it('lists each shell once, with no labels, bash first as SHELL says', () => {
    const home = mkdtempSync(join(tmpdir(), 'tandem-shell-choice-'));
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, SHELL: '/bin/bash' };
      delete env.TANDEM_SHELL_SEARCH_DIRS;
      delete env.TANDEM_BASH_INTEGRATION;
      const environment = new TerminalHost({ env, home }).environment();
      const names = environment.shells.map((shell) => shell.name);
      expect(new Set(names).size).toBe(names.length);
      expect(names[0]).toBe('bash');
      expect(environment.defaultShell).toEqual({ name: 'bash', path: '/bin/bash', integration: true });
      expect(environment.shells.filter((shell) => shell.label !== undefined)).toEqual([]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
