/**
 * The packaging settings as electron-builder itself reads and validates them (its own loader
 * and JSON schema), checked against what the running app relies on.
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Configuration } from 'app-builder-lib';
import { binScriptOf } from '../../src/main/launch/bridge-command.js';

const root = resolve(import.meta.dirname, '../..');
const builder = createRequire(import.meta.url)('app-builder-lib/out/util/config/config.js') as {
  getConfig(projectDir: string, configPath: string | null): Promise<Configuration>;
  validateConfiguration(config: Configuration, debugLogger: { add(key: string, value: unknown): void; isEnabled: boolean }): Promise<void>;
};

let config: Configuration;
beforeAll(async () => {
  config = await builder.getConfig(root, null);
});

describe('electron-builder.yml', () => {
  const validate = (value: unknown) => builder.validateConfiguration(structuredClone(value) as Configuration, { add: () => {}, isEnabled: false });

  it("passes electron-builder's own schema validation (which rejects a misspelt fuse)", async () => {
    await expect(validate(config)).resolves.toBeUndefined();
    await expect(validate({ ...config, electronFuses: { ...config.electronFuses, runAsNodee: true } })).rejects.toThrow(/Invalid configuration object/);
  });

  it('keeps ELECTRON_RUN_AS_NODE working (the bridge and node-pty kill on Windows run the app binary as Node)', () => {
    expect(config.electronFuses?.runAsNode).toBe(true);
  });

  it('re-signs arm64 macOS builds ad hoc after flipping fuses, and builds both Mac architectures', () => {
    expect(config.electronFuses?.resetAdHocDarwinSignature).toBe(true);
    const targets = (config.mac?.target as Array<{ target: string; arch: string[] }>) ?? [];
    expect(targets).toContainEqual({ target: 'dmg', arch: ['arm64', 'x64'] });
  });

  it('keeps the other hardening fuses', () => {
    expect(config.electronFuses).toMatchObject({
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      onlyLoadAppFromAsar: true,
      enableEmbeddedAsarIntegrityValidation: true,
    });
  });

  it('packs the CLI the bridge command points at, and node-pty and the shell scripts outside the asar', () => {
    expect(binScriptOf('resources/app.asar', 'linux')).toBe('resources/app.asar/bin/tandem.js');
    // The loader normalizes the list into file sets.
    const patterns = ([config.files].flat() as Array<string | { filter?: string | string[] }>).flatMap((entry) =>
      typeof entry === 'string' ? [entry] : [entry?.filter ?? []].flat(),
    );
    expect(patterns).toEqual(expect.arrayContaining(['bin/**', 'out/**', 'package.json']));
    expect(config.asarUnpack).toContain('node_modules/node-pty/**');
    // The shells read their integration scripts from disk (src/main/resources.ts: app.asar.unpacked).
    expect(config.asarUnpack).toContain('out/resources/**');
    expect(config.afterPack).toBe('scripts/after-pack.cjs');
  });

  it('names the Linux binary the README tells people to run', () => {
    expect(config.linux?.executableName).toBe('tandem-terminal');
    expect(config.linux?.target).toEqual(['AppImage', 'deb']);
  });
});
