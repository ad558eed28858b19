/**
 * The node-pty pin. 1.2.0-beta.15's Windows terminals can exit before the first write (node-pty
 * issue 955, https://github.com/microsoft/node-pty/issues/955); no Windows machine runs here, so
 * what is checked is that the pinned version, in package.json and in the lock npm ci installs
 * from, is exact and not one of those.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodePtyVersionsExitingBeforeFirstWrite } from '../../src/main/pty/win-pty.js';

const root = resolve(import.meta.dirname, '../..');
const read = (name: string) => JSON.parse(readFileSync(resolve(root, name), 'utf8')) as Record<string, unknown>;

describe('the node-pty pin', () => {
  it('is an exact version, the same in package.json and the lock, and not one that exits before the first write', () => {
    const wanted = (read('package.json').dependencies as Record<string, string>)['node-pty']!;
    const lock = read('package-lock.json') as { packages: Record<string, { version?: string; dependencies?: Record<string, string> }> };
    expect(wanted).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
    expect(lock.packages['']!.dependencies!['node-pty']).toBe(wanted);
    expect(lock.packages['node_modules/node-pty']!.version).toBe(wanted);
    expect(nodePtyVersionsExitingBeforeFirstWrite).toContain('1.2.0-beta.15');
    expect(nodePtyVersionsExitingBeforeFirstWrite).not.toContain(wanted);
  });
});
