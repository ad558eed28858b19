import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withoutAppImageEnv } from '../../src/main/launch/appimage-env.js';
import { binScriptOf, bridgeCommand, forThisHost, type InstallFacts, installKind } from '../../src/main/launch/bridge-command.js';
import { clientConfigs } from '../../src/main/agent/bridge/configs.js';
import { mcpArgs, mcpRelaunch } from '../../src/main/launch/mcp-mode.js';
import { localStateDir, stateDir } from '../../src/main/state-dir.js';
import { discoveryDir } from '../../src/main/host/instance.js';
import { bridgeLocation, shouldOfferMove, temporaryLocation } from '../../src/main/launch/app-location.js';

const base: InstallFacts = {
  platform: 'linux',
  electron: true,
  packaged: true,
  execPath: '/opt/Tandem/tandem-terminal',
  binScript: '/opt/Tandem/resources/app.asar/bin/tandem.js',
  appImage: undefined,
  nodeOnPath: null,
  tandemOnPath: false,
};

describe('the bridge command agents are given, per kind of install', () => {
  it('deb: the app binary runs its own CLI as Node', () => {
    expect(installKind(base)).toBe('app');
    expect(bridgeCommand(base)).toEqual({
      command: '/opt/Tandem/tandem-terminal',
      args: ['/opt/Tandem/resources/app.asar/bin/tandem.js', 'mcp'],
      env: { ELECTRON_RUN_AS_NODE: '1' },
    });
  });

  it('macOS and Windows apps: the same, with their own paths', () => {
    const mac = {
      ...base,
      platform: 'darwin' as const,
      execPath: '/Applications/Tandem.app/Contents/MacOS/Tandem',
      binScript: binScriptOf('/Applications/Tandem.app/Contents/Resources/app.asar', 'darwin'),
    };
    expect(bridgeCommand(mac)).toEqual({
      command: mac.execPath,
      args: ['/Applications/Tandem.app/Contents/Resources/app.asar/bin/tandem.js', 'mcp'],
      env: { ELECTRON_RUN_AS_NODE: '1' },
    });
    const appPath = 'C:\\Users\\p\\AppData\\Local\\Programs\\Tandem\\resources\\app.asar';
    const win = {
      ...base,
      platform: 'win32' as const,
      execPath: 'C:\\Users\\p\\AppData\\Local\\Programs\\Tandem\\Tandem.exe',
      binScript: binScriptOf(appPath, 'win32'),
    };
    expect(bridgeCommand(win)).toEqual({ command: win.execPath, args: [`${appPath}\\bin\\tandem.js`, 'mcp'], env: { ELECTRON_RUN_AS_NODE: '1' } });
  });

  it('AppImage: the AppImage file itself with --mcp, never a path inside its temporary mount', () => {
    const facts = {
      ...base,
      execPath: '/tmp/.mount_TandemAbc/tandem-terminal',
      binScript: '/tmp/.mount_TandemAbc/resources/app.asar/bin/tandem.js',
      appImage: '/home/p/Apps/Tandem.AppImage',
    };
    expect(installKind(facts)).toBe('appimage');
    const command = bridgeCommand(facts);
    expect(command).toEqual({ command: '/home/p/Apps/Tandem.AppImage', args: ['--mcp'] });
    expect(JSON.stringify(command)).not.toContain('.mount_');
  });

  it('npm start from a checkout: node and the absolute bin path, never bare electron (it would open its default app)', () => {
    const source = { ...base, packaged: false, execPath: '/src/tandem/node_modules/electron/dist/electron', binScript: '/src/tandem/bin/tandem.js' };
    expect(bridgeCommand({ ...source, nodeOnPath: '/usr/bin/node' })).toEqual({ command: '/usr/bin/node', args: ['/src/tandem/bin/tandem.js', 'mcp'] });
    expect(bridgeCommand(source)).toEqual({ command: source.execPath, args: ['/src/tandem/bin/tandem.js', 'mcp'], env: { ELECTRON_RUN_AS_NODE: '1' } });
  });

  it('tandem serve: `tandem mcp` only when tandem on PATH is this copy, else node with the absolute path', () => {
    const serve = { ...base, electron: false, packaged: false, execPath: '/usr/bin/node', binScript: '/home/p/tandem/bin/tandem.js' };
    expect(bridgeCommand({ ...serve, tandemOnPath: true })).toEqual({ command: 'tandem', args: ['mcp'] });
    expect(bridgeCommand(serve)).toEqual({ command: '/usr/bin/node', args: ['/home/p/tandem/bin/tandem.js', 'mcp'] });
  });
});

describe('a host with its own TANDEM_HOME', () => {
  it("prints configurations that carry it (absolute), beside the install's own variables", () => {
    const app = bridgeCommand(base);
    expect(forThisHost(app, { HOME: '/home/p' })).toBe(app);
    const own = forThisHost(app, { TANDEM_HOME: 'rel/tandem' });
    expect(own.env).toEqual({ ELECTRON_RUN_AS_NODE: '1', TANDEM_HOME: resolve('rel/tandem') });
    const claude = clientConfigs(forThisHost(app, { TANDEM_HOME: '/x/my tandem' }), 'a', 'tdm_x', 'linux').find((c) => c.client === 'Claude Code')!.text;
    expect(claude).toBe(
      "claude mcp add --scope user tandem -e TANDEM_TOKEN=tdm_x -e ELECTRON_RUN_AS_NODE=1 -e 'TANDEM_HOME=/x/my tandem' -- /opt/Tandem/tandem-terminal /opt/Tandem/resources/app.asar/bin/tandem.js mcp --name a",
    );
  });
});

describe('`Tandem --mcp`', () => {
  it('finds --mcp and --name after Chromium switches (AppRun adds --no-sandbox first)', () => {
    expect(mcpArgs(['/opt/Tandem/tandem-terminal', '--no-sandbox', '--mcp', '--name', 'my-agent'])).toEqual(['mcp', '--name', 'my-agent']);
    expect(mcpArgs(['Tandem.exe', '--mcp'])).toEqual(['mcp']);
    expect(mcpArgs(['Tandem.exe', '--mcp', '--name'])).toEqual(['mcp']);
    expect(mcpArgs(['Tandem.exe', '--name', 'x'])).toBeNull();
  });

  it('relaunches itself as Node on its own CLI, keeping the environment', () => {
    const relaunch = mcpRelaunch({
      execPath: 'C:\\T\\Tandem.exe',
      binScript: 'C:\\T\\resources\\app.asar\\bin\\tandem.js',
      cliArgs: ['mcp', '--name', 'a'],
      env: { TANDEM_TOKEN: 't', UNSET: undefined },
    });
    expect(relaunch).toEqual({
      command: 'C:\\T\\Tandem.exe',
      args: ['C:\\T\\resources\\app.asar\\bin\\tandem.js', 'mcp', '--name', 'a'],
      env: { TANDEM_TOKEN: 't', ELECTRON_RUN_AS_NODE: '1' },
    });
  });
});

describe('AppImage variables do not reach shells', () => {
  const appDir = '/tmp/.mount_TandemX1';
  const env = {
    APPIMAGE: '/home/p/Tandem.AppImage',
    APPDIR: appDir,
    ARGV0: './Tandem.AppImage',
    OWD: '/home/p',
    PATH: `${appDir}:${appDir}/usr/sbin:/usr/local/bin:/usr/bin`,
    LD_LIBRARY_PATH: `${appDir}/usr/lib`,
    XDG_DATA_DIRS: `${appDir}/usr/share/:/usr/share/ubuntu:/usr/local/share/:/usr/share/:/usr/share/gnome:/usr/local/share/:/usr/share/`,
    GSETTINGS_SCHEMA_DIR: `${appDir}/usr/share/glib-2.0/schemas`,
    HOME: '/home/p',
  };

  it('restores what AppRun changed and drops the runtime variables', () => {
    expect(withoutAppImageEnv(env)).toEqual({
      PATH: '/usr/local/bin:/usr/bin',
      XDG_DATA_DIRS: '/usr/share/ubuntu:/usr/local/share/:/usr/share/',
      HOME: '/home/p',
    });
  });

  it('unsets XDG_DATA_DIRS when AppRun made it up, and leaves non-AppImage runs alone', () => {
    expect(withoutAppImageEnv({ ...env, XDG_DATA_DIRS: `${appDir}/usr/share/:/usr/share/gnome:/usr/local/share/:/usr/share/` }).XDG_DATA_DIRS).toBeUndefined();
    const plain = { PATH: '/usr/bin', APPDIR: '/somewhere' };
    expect(withoutAppImageEnv(plain)).toBe(plain);
  });
});

describe('paths per OS', () => {
  it('Windows: settings roam in %APPDATA%, the profile, lock and instance.json stay in %LOCALAPPDATA%', () => {
    const env = { APPDATA: 'C:\\Users\\p\\AppData\\Roaming', LOCALAPPDATA: 'C:\\Users\\p\\AppData\\Local' };
    expect(stateDir({ platform: 'win32', env, home: 'C:\\Users\\p' })).toBe('C:\\Users\\p\\AppData\\Roaming\\Tandem');
    expect(localStateDir({ platform: 'win32', env, home: 'C:\\Users\\p' })).toBe('C:\\Users\\p\\AppData\\Local\\Tandem');
    expect(localStateDir({ platform: 'win32', env: {}, home: 'C:\\Users\\p' })).toBe('C:\\Users\\p\\AppData\\Local\\Tandem');
  });

  it('Linux and macOS: one state directory; TANDEM_HOME wins everywhere', () => {
    expect(localStateDir({ platform: 'linux', env: {}, home: '/home/p' })).toBe('/home/p/.config/Tandem');
    expect(localStateDir({ platform: 'darwin', env: {}, home: '/Users/p' })).toBe('/Users/p/Library/Application Support/Tandem');
    expect(localStateDir({ platform: 'win32', env: { TANDEM_HOME: '/x/t' }, home: '' })).toBe(resolve('/x/t'));
    expect(discoveryDir({ TANDEM_HOME: '/x/t' })).toBe(resolve('/x/t'));
  });
});

describe("the deb's scripts: electron-builder's own, plus bubblewrap's AppArmor profile", () => {
  const root = resolve(import.meta.dirname, '../..');
  const upstream = (name: string) => readFileSync(join(root, 'node_modules/app-builder-lib/templates/linux', name), 'utf8');
  const ours = (name: string) => readFileSync(join(root, 'resources/linux', name), 'utf8');
  const tandemBlock = /\n# --- Tandem: bubblewrap's AppArmor profile ---\n[\s\S]*$/;
  /** Ours without the header comment and Tandem's block: what must still equal upstream's. */
  const upstreamPart = (text: string) => text.replace(/^(#!\/bin\/bash\n)(# .*\n)+/, '$1').replace(tandemBlock, '');

  it("keeps electron-builder's templates unchanged (re-copy them when it is upgraded)", () => {
    for (const name of ['after-install.tpl', 'after-remove.tpl']) expect(upstreamPart(ours(name)).trimEnd()).toBe(upstream(name).trimEnd());
  });

  it('are the ones electron-builder.yml names for the deb', () => {
    const yml = readFileSync(join(root, 'electron-builder.yml'), 'utf8');
    expect(yml).toMatch(/\ndeb:\n(?: {2}#.*\n)* {2}afterInstall: resources\/linux\/after-install\.tpl\n {2}afterRemove: resources\/linux\/after-remove\.tpl\n/);
  });

  it('installs an unconfined profile allowing userns for /usr/bin/bwrap, unless another profile covers it, and removes it', () => {
    const install = tandemBlock.exec(ours('after-install.tpl'))![0];
    expect(install).toContain('profile tandem-bwrap /usr/bin/bwrap flags=(unconfined) {\n  userns,');
    expect(install).toContain('abi <abi/4.0>,');
    expect(install).toMatch(/find \/etc\/apparmor\.d .*grep -l '\/usr\/bin\/bwrap'/);
    expect(tandemBlock.exec(ours('after-remove.tpl'))![0]).toContain('apparmor_parser --remove "$TANDEM_BWRAP_PROFILE"');
    // electron-builder expands ${name} macros and fails on unknown ones: Tandem's blocks use none.
    expect(install).not.toMatch(/\$\{[a-zA-Z]+\}/);
  });

  it.runIf(spawnSync('shellcheck', ['--version']).status === 0 || process.env.TANDEM_REQUIRE_SHELL_LINT === '1')("Tandem's blocks pass shellcheck", () => {
    for (const name of ['after-install.tpl', 'after-remove.tpl']) {
      const block = `#!/bin/bash\n${tandemBlock.exec(ours(name))![0]}`;
      const run = spawnSync('shellcheck', ['-s', 'bash', '-'], { input: block, encoding: 'utf8' });
      expect(run.stdout, name).toBe('');
      expect(run.status).toBe(0);
    }
  });
});

describe('macOS: a disk image or a translocated copy is never baked into a configuration', () => {
  const dmg = '/Volumes/Tandem 1.0/Tandem.app/Contents/MacOS/Tandem';
  const translocated = '/private/var/folders/xy/abc123/T/AppTranslocation/5F1E-22/d/Tandem.app/Contents/MacOS/Tandem';
  const installed = '/Applications/Tandem.app/Contents/MacOS/Tandem';
  const mac = (execPath: string): InstallFacts => ({
    ...base,
    platform: 'darwin',
    execPath,
    binScript: `${execPath.replace(/MacOS\/Tandem$/, 'Resources/app.asar')}/bin/tandem.js`,
  });

  it('tells the temporary locations from a lasting one', () => {
    expect(temporaryLocation(dmg, 'darwin')).toBe('disk-image');
    expect(temporaryLocation(translocated, 'darwin')).toBe('translocated');
    expect(temporaryLocation(translocated.replace('/private', ''), 'darwin')).toBe('translocated');
    expect(temporaryLocation(installed, 'darwin')).toBeNull();
    expect(temporaryLocation(`${process.env.HOME ?? '/Users/me'}/Applications/Tandem.app/Contents/MacOS/Tandem`, 'darwin')).toBeNull();
    // Only macOS mounts disk images there.
    expect(temporaryLocation(dmg, 'linux')).toBeNull();
  });

  it.each([
    ['disk image', dmg, /disk image/],
    ['translocated copy', translocated, /temporary copy/],
  ])('the pairing configuration from a %s shows how to move the app instead of the path', (_kind, execPath, says) => {
    const bridge = bridgeCommand(mac(execPath));
    expect(bridgeLocation(bridge, 'darwin')).not.toBeNull();
    const configs = clientConfigs(bridge, 'claude', 'tandem_secret_token', 'darwin');
    const text = configs.map((config) => `${config.client}\n${config.file}\n${config.text}`).join('\n');
    expect(text).toMatch(says);
    expect(text).toMatch(/Applications folder/);
    // Neither the temporary path nor a command that would start it is printed.
    expect(text).not.toContain(execPath);
    expect(text).not.toContain('/Volumes/');
    expect(text).not.toContain('AppTranslocation');
    expect(text).not.toContain('mcp add');
  });

  it('the app in /Applications gets its configurations as before', () => {
    const configs = clientConfigs(bridgeCommand(mac(installed)), 'claude', 'tandem_secret_token', 'darwin');
    expect(configs.find((config) => config.client === 'Claude Code')?.text).toContain(installed);
  });

  it('offers the move only for an installed macOS app outside /Applications at a temporary path', () => {
    const facts = { platform: 'darwin' as const, packaged: true, inApplicationsFolder: false, execPath: dmg };
    expect(shouldOfferMove(facts)).toBe('disk-image');
    expect(shouldOfferMove({ ...facts, execPath: translocated })).toBe('translocated');
    expect(shouldOfferMove({ ...facts, inApplicationsFolder: true })).toBeNull();
    expect(shouldOfferMove({ ...facts, packaged: false })).toBeNull();
    expect(shouldOfferMove({ ...facts, platform: 'linux' })).toBeNull();
    // Elsewhere in the home folder it lasts: no nagging.
    expect(shouldOfferMove({ ...facts, execPath: '/Users/me/Apps/Tandem.app/Contents/MacOS/Tandem' })).toBeNull();
  });
});
