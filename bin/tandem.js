#!/usr/bin/env node
// The `tandem` command: loads the built CLI (out/main/cli.js, built by electron-vite from
// src/main/cli.ts), building it first when this is a source checkout without a build.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'out', 'main', 'cli.js');

if (!existsSync(cli)) {
  const canBuild = existsSync(join(root, 'electron.vite.config.ts')) && existsSync(join(root, 'node_modules', '.bin', 'electron-vite'));
  if (!canBuild) {
    process.stderr.write(`Tandem is not built (${cli} is missing); run \`npm run build\` in ${root}.\n`);
    process.exit(1);
  }
  process.stderr.write('Building Tandem (npx electron-vite build)…\n');
  const result = spawnSync('npx', ['electron-vite', 'build'], { cwd: root, stdio: ['ignore', 2, 2], shell: process.platform === 'win32' });
  if (result.status !== 0 || !existsSync(cli)) {
    process.stderr.write(`The build failed; run \`npm run build\` in ${root} and try again.\n`);
    process.exit(1);
  }
}

const { main } = await import(pathToFileURL(cli).href);
const code = await main(process.argv.slice(2));
process.exit(code);
