/**
 * How a failed bubblewrap probe is explained: Ubuntu 24.04's AppArmor rule, read from the sysctl
 * (here a fake file standing in for /proc/sys/kernel/apparmor_restrict_unprivileged_userns,
 * which this kernel does not have), or bubblewrap's own words for it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyProbe, userNamespacesRestricted } from '../../src/main/sandbox/availability.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-userns-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function sysctl(value: string): string {
  const file = join(dir, `restrict-${value.trim() || 'empty'}`);
  writeFileSync(file, value);
  return file;
}

describe('reading kernel.apparmor_restrict_unprivileged_userns', () => {
  it('1 is restricted, 0 is not, no file is a kernel without the rule', () => {
    expect(userNamespacesRestricted(sysctl('1\n'))).toBe(true);
    expect(userNamespacesRestricted(sysctl('0\n'))).toBe(false);
    expect(userNamespacesRestricted(join(dir, 'absent'))).toBeNull();
  });
});

describe('explaining a failed probe', () => {
  const uidMap = { status: 1, said: 'bwrap: setting up uid map: Permission denied\n' };
  const noPerm = { status: 1, said: 'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.' };

  it("a started probe is no problem, whatever the sysctl says (the deb's profile lets bubblewrap through)", () => {
    expect(classifyProbe({ status: 0, said: '' }, userNamespacesRestricted(sysctl('1')))).toBeNull();
  });

  it('restricted sysctl: AppArmor, with what it means and each fix (the deb, the profile, the sysctl, or sandbox off)', () => {
    const problem = classifyProbe(uidMap, userNamespacesRestricted(sysctl('1')));
    expect(problem?.cause).toBe('apparmor');
    expect(problem?.message).toContain('setting up uid map: Permission denied');
    expect(problem?.message).toMatch(/refused/);
    expect(problem?.message).toContain("Tandem's .deb");
    expect(problem?.message).toContain('sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0');
    expect(problem?.message).toMatch(/sandbox to off/);
  });

  it("no sysctl: bubblewrap's AppArmor words still name AppArmor; other failures name user namespaces", () => {
    expect(classifyProbe(uidMap, null)?.cause).toBe('apparmor');
    expect(classifyProbe(noPerm, null)?.cause).toBe('apparmor');
    expect(
      classifyProbe({ status: 1, said: 'bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)' }, null)
        ?.cause,
    ).toBe('userns');
  });

  it('sysctl 0: not AppArmor, even with the same words (max_user_namespaces=0 says them too)', () => {
    const problem = classifyProbe(noPerm, userNamespacesRestricted(sysctl('0')));
    expect(problem).toMatchObject({ cause: 'userns', message: expect.stringContaining('user.max_user_namespaces') });
  });
});
