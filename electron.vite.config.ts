import { cpSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig, externalizeDepsPlugin } from 'electron-vite';
import type { Plugin } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

/**
 * resources/ goes into out/resources beside the main bundle, so the build runs on its own
 * (`tandem serve`, the npm package, the installers' asar-unpacked copy): see src/main/resources.ts.
 */
function copyResources(): Plugin {
  return {
    name: 'tandem-copy-resources',
    writeBundle() {
      rmSync(resolve('out/resources'), { recursive: true, force: true });
      cpSync(resolve('resources/shell'), resolve('out/resources/shell'), { recursive: true });
      cpSync(resolve('resources/sandbox'), resolve('out/resources/sandbox'), { recursive: true });
    },
  };
}

export default defineConfig({
  main: {
    plugins: [externalizeDepsPlugin(), copyResources()],
    build: {
      rollupOptions: {
        input: {
          index: resolve('src/main/index.ts'),
          // `tandem serve` / `tandem mcp` (bin/tandem.js loads it): plain Node, never electron.
          cli: resolve('src/main/cli.ts'),
        },
      },
    },
  },
  preload: {
    // The sandboxed preload must be a single CommonJS bundle: it can require only electron.
    build: {
      externalizeDeps: false,
      rollupOptions: {
        input: { index: resolve('src/preload/index.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve('src/renderer'),
    // The renderer root is src/renderer, so point the plugin at the project's svelte.config.js.
    plugins: [svelte({ configFile: resolve('svelte.config.js') })],
    build: {
      rollupOptions: { input: { index: resolve('src/renderer/index.html') } },
    },
  },
});
