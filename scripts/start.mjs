#!/usr/bin/env node
// `npm start` / `npm run dev`: electron-vite with the Electron runtime in place. Electron 45's
// npm package has no install script: it downloads its runtime on first use of
// `require('electron')`, but electron-vite only reads node_modules/electron/path.txt and stops
// with "Electron uninstall". So fetch it here first, or say in one sentence how to.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const mode = process.argv[2] ?? 'preview';

function electronDir() {
  try {
    return dirname(require.resolve('electron/package.json'));
  } catch {
    return null;
  }
}

/** The runtime binary, when installed. */
function runtime(dir) {
  const pathFile = join(dir, 'path.txt');
  if (!existsSync(pathFile)) return null;
  const binary = join(process.env.ELECTRON_OVERRIDE_DIST_PATH ?? join(dir, 'dist'), readFileSync(pathFile, 'utf8'));
  return existsSync(binary) ? binary : null;
}

const dir = electronDir();
if (!dir) {
  console.error('Tandem cannot start: the electron package is not installed; run `npm install` in this folder first.');
  process.exit(1);
}
if (!runtime(dir) && !process.env.ELECTRON_SKIP_BINARY_DOWNLOAD) {
  console.error('Downloading the Electron runtime (once)…');
  spawnSync(process.execPath, [join(dir, 'install.js')], { stdio: 'inherit' });
}
if (!runtime(dir)) {
  console.error(
    'Tandem cannot start: the Electron runtime is not installed; run `npx install-electron --no` here (it downloads Electron from GitHub), or use `npm run serve` for the browser UI without Electron.',
  );
  process.exit(1);
}
const cli = join(dirname(require.resolve('electron-vite/package.json')), 'bin', 'electron-vite.js');
const result = spawnSync(process.execPath, [cli, mode, ...process.argv.slice(3)], { stdio: 'inherit' });
process.exit(result.status ?? 1);
