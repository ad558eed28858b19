import { describe, expect, it } from 'vitest';
import { discoverShells } from '../../src/main/shells/discovery.js';
import { which } from '../../src/main/shells/resolve.js';

describe('shell discovery on this machine', () => {
  it('puts the default shell first and lists bash, zsh and sh once each (and pwsh where installed)', () => {
    const found = discoverShells({ ...process.env, SHELL: '/bin/bash' }, 'linux');
    expect(found.defaultShell?.name).toBe('bash');
    const names = found.shells.map((shell) => shell.name);
    expect(names[0]).toBe('bash');
    for (const name of ['bash', 'zsh', 'sh']) if (which(name)) expect(names.filter((n) => n === name)).toHaveLength(1);
    if (which('pwsh')) expect(names).toContain('pwsh');
    expect(found.shells.find((shell) => shell.name === 'bash')?.dialect?.integration).toBe('full');
  });

  it('falls back to /bin/sh when SHELL names nothing usable, and lists fish without integration', () => {
    const found = discoverShells({ ...process.env, SHELL: '' }, 'linux');
    expect(found.defaultShell).not.toBeNull();
    const fish = found.shells.find((shell) => shell.name === 'fish');
    if (fish) expect(fish.dialect).toBeNull();
  });
});
