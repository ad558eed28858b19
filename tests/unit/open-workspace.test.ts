/** Which workspaces of a confined open ask the person (src/main/agent/service/open-workspace.ts). */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { workspaceConcern } from '../../src/main/agent/service/open-workspace.js';

it('names why a workspace is too wide, following symlinks', () => {
  const home = mkdtempSync(join(tmpdir(), 'tandem-concern-'));
  try {
    const project = join(home, 'p');
    mkdirSync(join(project, 'src'), { recursive: true });
    expect(workspaceConcern(join(project, 'src'), project, home)).toBeNull();
    expect(workspaceConcern(project, null, home)).toBeNull();
    expect(workspaceConcern(home, project, home)).toContain('home directory');
    expect(workspaceConcern(join(home, '..'), null, home)).toContain('home directory');
    expect(workspaceConcern('/', null, home)).toContain('whole filesystem');
    expect(workspaceConcern(join(project, 'src', '..', '..'), project, home)).toContain('home directory');
    const other = mkdtempSync(join(tmpdir(), 'tandem-concern-other-'));
    expect(workspaceConcern(other, project, home)).toContain(`outside the agent's project (${project})`);
    // A link inside the project that leads home is the home directory.
    symlinkSync(home, join(project, 'up'));
    expect(workspaceConcern(join(project, 'up'), project, home)).toContain('home directory');
    symlinkSync(other, join(project, 'away'));
    expect(workspaceConcern(join(project, 'away'), project, home)).toContain('outside');
    rmSync(other, { recursive: true, force: true });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
