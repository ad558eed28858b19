/**
 * The bash integration for bash older than 4.4 (resources/shell/tandem-legacy.bash: macOS's
 * /bin/bash is 3.2) on this machine's bash: TANDEM_BASH_INTEGRATION=legacy selects it whatever
 * the version, and the engine's whole suite (tests/integration/engine.test.ts) runs again
 * through it, bash only. No bash 3.2 exists on Debian (bash and bash-static are both 5.2), so
 * what 3.2 lacks is guarded statically in tests/unit/shell-scripts.test.ts.
 */
import { describe, expect, it } from 'vitest';

process.env.TANDEM_BASH_INTEGRATION = 'legacy';
process.env.TANDEM_TEST_SHELLS = 'bash';

const { availableShells, makeHome, SessionPool } = await import('./helpers.js');
const { resolveShell } = await import('../../src/main/shells/resolve.js');
const { bashLegacyDialect } = await import('../../src/main/shells/bash.js');

describe.runIf(availableShells.includes('bash'))('bash legacy integration', () => {
  it('is the one in use: a DEBUG trap function, no PS0, no bracketed paste', async () => {
    expect(resolveShell('bash').dialect).toBe(bashLegacyDialect);
    const home = makeHome();
    const pool = new SessionPool(home.home);
    try {
      const t = await pool.open('bash');
      const r = await t.send({ text: 'declare -F __tandem_debug; echo "[${PS0-}]"' });
      expect(r).toMatchObject({ status: 'done', exitCode: 0, output: '__tandem_debug\n[]' });
      // The trap went with the first command: the rest of the line keeps $?, $_ and PIPESTATUS.
      expect(await t.send({ text: 'false | true; echo "${PIPESTATUS[*]}"' })).toMatchObject({ status: 'done', output: '1 0' });
      expect(await t.send({ text: 'false' })).toMatchObject({ status: 'done', exitCode: 1 });
      expect(await t.send({ text: 'echo "st=$?"' })).toMatchObject({ status: 'done', output: 'st=1' });
      expect(await t.send({ text: 'echo a b' })).toMatchObject({ status: 'done', output: 'a b' });
      expect(await t.send({ text: 'echo "last=$_"' })).toMatchObject({ status: 'done', output: 'last=b' });
      // A known limit (README, Known limitations): a line that is only a subshell runs nothing in
      // the shell itself, so no start marker; it settles at the prompt with its status, and its
      // output is on the screen, not in the result.
      expect(await t.send({ text: '(echo in-sub; exit 3)' })).toMatchObject({ status: 'done', exitCode: 3, output: '' });
      expect(await t.send({ text: 'echo next' })).toMatchObject({ status: 'done', output: 'next' });
    } finally {
      await pool.closeAll();
      home.cleanup();
    }
  });

  it('reports aliases, hashed commands and functions as tandem.bash does', async () => {
    const home = makeHome();
    const pool = new SessionPool(home.home);
    try {
      const t = await pool.open('bash');
      await t.send({ text: `alias ll='ls -l'; alias q="it's"; hash -p /tmp/elsewhere foo; hash ls; g() { :; }` });
      await t.send({ text: 'true' });
      // The report follows the end marker: wait for the one of the last command.
      const report = await t.freshRedirects(10_000);
      expect(report).toMatchObject({ incomplete: false, pathChanged: false });
      expect([...(report?.aliases ?? [])]).toEqual([
        ['ll', 'ls -l'],
        ['q', "it's"],
      ]);
      expect([...(report?.hashed ?? [])]).toEqual([['foo', '/tmp/elsewhere']]);
      expect(report?.functions.has('g')).toBe(true);
    } finally {
      await pool.closeAll();
      home.cleanup();
    }
  });
});

await import('./engine.test.js');
