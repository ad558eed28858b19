/**
 * Other instances' state directories (TANDEM_HOME) record themselves in the default one, so every
 * instance of the person's protects them (the judge's protected locations, the sandbox's hidden
 * paths). Real files in a temporary home.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hiddenPathCandidates } from '../../src/main/sandbox/hidden-paths.js';
import { defaultStateDirs, knownStateDirs, registerStateDir } from '../../src/main/state-dir.js';

const env: NodeJS.ProcessEnv = {};
const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-registry-'));
  homes.push(dir);
  return dir;
}

describe('the state directory registry', () => {
  it('records another state directory as a 0600 file in a 0700 folder, and every reader sees it', () => {
    const h = home();
    const other = join(h, 'work', 'tandem-b');
    mkdirSync(other, { recursive: true });
    expect(registerStateDir(other, h, 'linux', env)).toBe(true);
    // Twice is one entry.
    expect(registerStateDir(other, h, 'linux', env)).toBe(true);
    const registry = join(defaultStateDirs(h, 'linux', env)[0]!, 'state-dirs');
    expect(statSync(registry).mode & 0o777).toBe(0o700);
    const files = readdirSync(registry);
    expect(files).toHaveLength(1);
    expect(statSync(join(registry, files[0]!)).mode & 0o777).toBe(0o600);
    expect(knownStateDirs(h, 'linux', env)).toEqual([other]);
    expect(hiddenPathCandidates({ home: h, env, stateDir: join(h, 'elsewhere'), discoveryDir: join(h, 'run') })).toContain(other);
  });

  it('does not record the default directory, and drops entries of directories gone', () => {
    const h = home();
    expect(registerStateDir(defaultStateDirs(h, 'linux', env)[0]!, h, 'linux', env)).toBe(false);
    const other = join(h, 'tandem-c');
    mkdirSync(other);
    registerStateDir(other, h, 'linux', env);
    rmSync(other, { recursive: true });
    expect(knownStateDirs(h, 'linux', env)).toEqual([]);
    expect(readdirSync(join(defaultStateDirs(h, 'linux', env)[0]!, 'state-dirs'))).toEqual([]);
  });

  it('never yields the home or a folder above it, or a relative path, whoever planted the entry', () => {
    const h = home();
    const registry = join(defaultStateDirs(h, 'linux', env)[0]!, 'state-dirs');
    mkdirSync(registry, { recursive: true });
    const planted = { a: h, b: '/', c: 'relative/dir', d: join(h, '..') };
    for (const [key, dir] of Object.entries(planted)) writeFileSync(join(registry, key.repeat(32)), dir);
    expect(knownStateDirs(h, 'linux', env)).toEqual([]);
  });
});
