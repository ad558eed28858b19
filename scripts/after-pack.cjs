// electron-builder afterPack hook: packing can drop the execute bit of node-pty's
// spawn-helper on macOS, and without it no terminal can start.
const { chmodSync, existsSync } = require('node:fs');
const { join } = require('node:path');

exports.default = async function afterPack(context) {
  if (context.electronPlatformName !== 'darwin') return;
  const app = `${context.packager.appInfo.productFilename}.app`;
  const unpacked = join(context.appOutDir, app, 'Contents', 'Resources', 'app.asar.unpacked', 'node_modules', 'node-pty');
  for (const dir of ['build/Release', 'prebuilds/darwin-arm64', 'prebuilds/darwin-x64']) {
    const helper = join(unpacked, dir, 'spawn-helper');
    if (existsSync(helper)) chmodSync(helper, 0o755);
  }
};
