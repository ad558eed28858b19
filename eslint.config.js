import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['out/', 'dist/', 'node_modules/', 'bench/results.json', 'test-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...svelte.configs['flat/recommended'],
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-control-regex': 'off',
    },
  },
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: tseslint.parser } },
  },
  {
    // CommonJS hooks that packaging tools load with require().
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Only the Electron layer may import electron: the host runs in plain Node too.
    files: ['src/main/{pty,shells,terminal,host,agent,web,launch}/**/*.ts', 'src/shared/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: ['electron'] }] },
  },
  {
    // The agent layer asks the host through AgentHost and reaches a terminal through its TerminalPort
    // (src/main/host/terminal-port.ts); the host's own class would hand it sessions and control.
    files: ['src/main/agent/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['electron'],
          patterns: [{ group: ['**/host/host.js'], importNames: ['TerminalHost', 'ManagedTerminal'], message: 'Use AgentHost and TerminalPort (issue 25).' }],
        },
      ],
    },
  },
);
