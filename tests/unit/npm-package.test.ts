/**
 * What `npm install -g tandem-terminal` gets: the built CLI and UI (packing builds them first),
 * no sources or tests, and only imports its runtime dependencies provide.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  bin: Record<string, string>;
};
const built = existsSync(join(root, 'out', 'main', 'cli.js'));
if (!built) console.warn('npm package check skipped: out/ is not built (`npm test` builds it first; or run `npm run build`).');

describe.runIf(built)('the npm package', () => {
  const listing = JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8', shell: process.platform === 'win32' }),
  ) as Array<{ files: Array<{ path: string }> }>;
  const files = listing[0]!.files.map((file) => file.path);

  it('builds before packing, and carries the CLI, its chunks and the UI', () => {
    expect(pkg.scripts.prepack).toMatch(/electron-vite build/);
    expect(files).toEqual(expect.arrayContaining([pkg.bin.tandem, 'out/main/cli.js', 'out/renderer/index.html']));
    for (const chunk of readdirSync(join(root, 'out', 'main', 'chunks'))) expect(files).toContain(`out/main/chunks/${chunk}`);
  });

  it('carries the shell integration scripts where the built code looks for them', () => {
    const scripts = readdirSync(join(root, 'resources', 'shell'));
    expect(scripts.length).toBeGreaterThan(0);
    for (const script of scripts) {
      expect(files).toContain(`out/resources/shell/${script}`);
      expect(readFileSync(join(root, 'out', 'resources', 'shell', script), 'utf8'), script).toBe(
        readFileSync(join(root, 'resources', 'shell', script), 'utf8'),
      );
    }
  });

  it('leaves sources, tests and tooling out', () => {
    expect(files.filter((path) => /^(src|tests|bench|scripts|resources|\.github|\.ci)\//.test(path))).toEqual([]);
  });

  it('imports nothing at run time that its dependencies do not provide', () => {
    const code = ['cli.js', ...readdirSync(join(root, 'out', 'main', 'chunks')).map((chunk) => `chunks/${chunk}`)]
      .map((file) => readFileSync(join(root, 'out', 'main', file), 'utf8'))
      .join('\n');
    const imported = new Set(
      [...code.matchAll(/(?:^|\n)import\s[^;]*?from\s*["']([^"'.][^"']*)["']/g)].map((m) => m[1]!).filter((name) => !name.startsWith('node:')),
    );
    const packages = [...imported].map((name) => (name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0]!));
    expect(packages.length).toBeGreaterThan(0);
    for (const name of packages) expect(Object.keys(pkg.dependencies), name).toContain(name);
  });
});
