import { resolve } from 'node:path';
import { defineConfig, externalizeDepsPlugin } from 'electron-vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

export default defineConfig({
  main: {
    plugins: [externalizeDepsPlugin()],
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
