import { describe, expect, it } from 'vitest';
import { chromiumAvailable, chromiumRequired, skipReason } from './helpers/browser';
import { useUiFixture } from './helpers/ui-fixture';
import { activeTerminalId, typeLine, waitForPrompt, waitForScreen } from './helpers/page';
import { testUrl } from './helpers/serve';

const runUi = chromiumAvailable || chromiumRequired;
if (!runUi) console.warn(skipReason);

/**
 * Every request a program can send that xterm.js would answer: DA1, DA2, DA3, DSR status, CPR,
 * DECXCPR, DECRQM (ANSI and DEC), XTVERSION, window reports, OSC 10/11/12 colour queries and
 * DECRQSS, then a second DSR status as the last. The program reads until the second status reply
 * (the host answers in order, so everything it answers has come: no time bound decides, which on a
 * loaded machine once counted 10 replies alone and 15 with the page), then a second for stray
 * replies (only a page answering too sends any), and prints how many escape sequences arrived.
 */
const probe = [
  `printf '\\033[c\\033[>c\\033[=c\\033[5n\\033[6n\\033[?6n\\033[4$p\\033[?25$p\\033[>q\\033[14t\\033[18t\\033]10;?\\007\\033]11;?\\007\\033]12;?\\007\\033P$qm\\033\\\\\\033[5n'`,
  `x=`,
  `while IFS= read -rs -N1 -t 60 c; do x+=$c; [[ $x == *$'\\e[0n'*$'\\e[0n'* ]] && break; done`,
  `while IFS= read -rs -N1 -t 1 c; do x+=$c; done`,
  `r=\${x//[^$'\\e']/}`,
  `printf '\\nreplies=%s\\n' "\${#r}"`,
].join('; ');
// A reply that lands between two of read's calls is echoed by the terminal (read -s turns echo off
// only while it reads) and still read and counted, so echoed replies may precede the count: a
// loaded whole-suite run showed `…^[\replies=16`, and another wrapped `…^[[0nrep` / `lies=16` at
// the screen's edge. The count goes on a line of its own, and the test's screen text keeps rows
// as rows (ui-command-marks indexes them), so a wrap must not split it.
const repliesLine = /^replies=(\d+)$/m;

/** The browser's xterm.js must add nothing to what the host's emulator answers. */
describe.skipIf(!runUi)('Tandem UI: terminal protocol requests', () => {
  const ui = useUiFixture({ width: 1000, height: 640 });

  it('gets as many replies with the page attached as the host alone gives', async () => {
    // Without any view: only the host can answer.
    const alone = await ui.serve.host.create({ title: 'no view' });
    await ui.serve.host.get(alone.id).session.write(`${probe}\r`);

    await ui.page.goto(testUrl(ui.serve.loginUrl));
    await ui.page.locator(`[role="tab"][data-terminal-id="${alone.id}"]`).waitFor();
    const hostOnly = Number(repliesLine.exec(await waitForScreen(ui.page, alone.id, repliesLine))![1]);
    expect(hostOnly).toBeGreaterThan(0);

    // With the page attached and in front, the person runs the same probe.
    await ui.page.getByRole('button', { name: 'New terminal', exact: true }).click();
    await ui.page.locator(`[role="tab"][aria-selected="true"]:not([data-terminal-id="${alone.id}"])`).waitFor();
    const viewed = await activeTerminalId(ui.page);
    await waitForPrompt(ui.page, viewed);
    await typeLine(ui.page, probe);
    const withPage = Number(repliesLine.exec(await waitForScreen(ui.page, viewed, repliesLine))![1]);
    expect(withPage).toBe(hostOnly);
  });
});
