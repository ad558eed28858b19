import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DrainFence, type FrontGroup } from '../../src/main/terminal/session/drain-fence.js';

function fenceIn(): { fence: DrainFence; flag: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-fence-'));
  const flag = join(dir, 'drain');
  return { fence: new DrainFence(flag, true), flag, dir };
}

describe('the drain flag and its fence (drain-fence.ts)', () => {
  it('makes the flag whole with a fresh nonce, 0600, before it looks at who is in front', () => {
    const { fence, flag, dir } = fenceIn();
    fence.began();
    const looked: boolean[] = [];
    const gate = fence.gate(true, () => {
      looked.push(existsSync(flag));
      return 'program';
    });
    expect(gate).toBe('write');
    expect(looked).toEqual([true]);
    expect(readFileSync(flag, 'utf8')).toMatch(/^[0-9a-f]{24}\n$/);
    expect(statSync(flag).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['drain']);
  });

  it("writes for a program in front, waits for the PTY where the shell's own group is, and drops once the prompt began", () => {
    const { fence } = fenceIn();
    const front = (group: FrontGroup) => () => group;
    expect(fence.gate(false, front('program'))).toBe('drop');
    fence.began();
    expect(fence.gate(true, front('program'))).toBe('write');
    expect(fence.gate(true, front('shell'))).toBe('sync');
    expect(fence.gate(true, front('unknown'))).toBe('sync');
    fence.prompt();
    expect(fence.atPrompt).toBe(true);
    expect(fence.gate(true, front('program'))).toBe('drop');
    // The next command: a prompt of its own is needed again.
    fence.began();
    expect(fence.atPrompt).toBe(false);
    expect(fence.gate(true, front('program'))).toBe('write');
  });

  it("answers F with a newline, the flag's nonce and RS, and removes the flag; a new arming gets a new nonce", () => {
    const { fence, flag } = fenceIn();
    fence.began();
    fence.arm();
    const nonce = readFileSync(flag, 'utf8').trim();
    expect(fence.fenceBytes()).toBe(`\n${nonce}\x1e`);
    expect(existsSync(flag)).toBe(false);
    expect(fence.armed).toBe(false);
    fence.arm();
    expect(readFileSync(flag, 'utf8').trim()).not.toBe(nonce);
  });

  it("answers an F for a flag it did not make with that file's nonce, so the shell does not wait in vain", () => {
    const { fence, flag } = fenceIn();
    writeFileSync(flag, 'abc123\n');
    expect(fence.fenceBytes()).toBe('\nabc123\x1e');
    expect(existsSync(flag)).toBe(false);
    expect(new DrainFence(null, false).fenceBytes()).toBe('\n\x1e');
  });

  it("makes no flag for the person's terminal, and lets nothing through a gate there", () => {
    const fence = new DrainFence(null, true);
    expect(fence.fenced).toBe(false);
    fence.began();
    expect(fence.arm()).toBe(false);
    expect(fence.gate(true, () => 'program')).toBe('drop');
  });
});
