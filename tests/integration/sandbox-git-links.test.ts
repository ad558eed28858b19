/**
 * Issue 24's black-box findings at open, attacked as a hostile confined agent would: it plants
 * symbolic links where git looks for a repository (`.git` itself, a git directory's `commondir`
 * or `objects`), then opens a confined terminal there. Preparing the protection must create
 * nothing outside the workspace (a fake ~/.ssh that looks like a git directory stays as it was)
 * and the open is refused with `sandbox_unavailable` naming the link. And a repository of the
 * person's that no index records, under the workspace, is protected like the workspace's own:
 * the person's later `git status` in it runs nothing the agent planted.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startAgentFixture, type AgentFixture } from './agent-helpers.js';
import { describeSandbox } from './sandbox-helpers.js';

type Result = Record<string, unknown> & { status?: string; exitCode?: number | null; output?: string; id?: string };

/** Every path under `dir`, recursively (a snapshot to compare). */
function tree(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).sort();
}

describeSandbox('links and unrecorded repositories where git looks, attacked at a confined open', () => {
  let f: AgentFixture;
  let client: Client;
  /** Outside the workspace: looks like a git directory (HEAD, objects/), as ~/.ssh would to a careless host. */
  let victim: string;
  let canary: string;
  const send = (id: string, text: string) => f.call(client, 'terminal_send', { id, text }) as Promise<Result>;
  const open = (cwd: string) => f.call(client, 'terminal_open', { title: 'git', cwd }) as Promise<Result>;
  const ok = async (id: string, text: string) => {
    const r = await send(id, text);
    expect(r, text).toMatchObject({ status: 'done', exitCode: 0 });
    return r;
  };

  beforeAll(async () => {
    f = await startAgentFixture({ defaultSandbox: 'workspace-write' });
    const token = f.layer.pairAgent({ name: 'planter' }).token;
    f.layer.setAgentPolicy({ name: 'planter', policy: 'always', sandbox: 'workspace-write', network: false });
    client = await f.client(token);
    victim = join(f.root, 'victim-ssh');
    mkdirSync(join(victim, 'objects'), { recursive: true });
    writeFileSync(join(victim, 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(victim, 'authorized_keys'), 'ssh-ed25519 AAAA person\n');
    canary = join(f.root, 'CANARY');
  });
  afterAll(async () => {
    await f.close();
  });
  afterEach(async () => {
    await Promise.all(f.host.list().map((t) => f.host.close(t.id)));
  });

  it('a planted .git link to a folder outside: the open is refused and nothing is created there', async () => {
    const before = tree(victim);
    const planter = await open(f.project);
    expect(planter.id, JSON.stringify(planter)).toBeDefined();
    await ok(planter.id!, `mkdir -p linked && ln -s ${victim} linked/.git`);
    await f.call(client, 'terminal_close', { id: planter.id });
    const refused = await open(join(f.project, 'linked'));
    // The side effect first: nothing made in the folder the link points to.
    expect(tree(victim)).toEqual(before);
    expect(refused).toMatchObject({
      isError: true,
      error: { code: 'sandbox_unavailable', message: expect.stringContaining(`${join(f.project, 'linked', '.git')} is a symbolic link`) },
    });
    // At the parent too: the walk finds the link.
    expect(await open(f.project)).toMatchObject({ isError: true, error: { code: 'sandbox_unavailable' } });
    expect(tree(victim)).toEqual(before);
    expect(f.host.list()).toEqual([]);
    execFileSync('rm', ['-rf', join(f.project, 'linked')]);
  });

  it("a repository of the agent's own with commondir and objects linked outside: nothing written through them", async () => {
    const before = tree(victim);
    const planter = await open(f.project);
    // commondir dangles to a file that does not exist yet; objects points at the fake ~/.ssh.
    await ok(planter.id!, `git init -q own && ln -s ${join(victim, 'planted')} own/.git/commondir`);
    await ok(planter.id!, `git init -q own2 && rm -rf own2/.git/objects && ln -s ${victim} own2/.git/objects`);
    await f.call(client, 'terminal_close', { id: planter.id });
    const answers = [await open(join(f.project, 'own')), await open(join(f.project, 'own2'))];
    // The side effect first: no file through commondir, no objects/info through objects.
    expect(existsSync(join(victim, 'planted'))).toBe(false);
    expect(existsSync(join(victim, 'info'))).toBe(false);
    expect(tree(victim)).toEqual(before);
    for (const answer of answers)
      expect(answer).toMatchObject({ isError: true, error: { code: 'sandbox_unavailable', message: expect.stringMatching(/is a symbolic link/) } });
    execFileSync('rm', ['-rf', join(f.project, 'own'), join(f.project, 'own2')]);
  });

  it("a person's repository that no index records, under the workspace: its config and hooks stay theirs", async () => {
    const lib = join(f.project, 'vendor', 'lib');
    mkdirSync(lib, { recursive: true });
    const personGit = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=P', '-c', 'user.email=p@e', ...args], {
        cwd: lib,
        encoding: 'utf8',
        env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', HOME: f.home },
      });
    personGit('init', '-q');
    writeFileSync(join(lib, 'l.txt'), 'l\n');
    personGit('add', '.');
    personGit('commit', '-q', '-m', 'lib');
    // A hooks folder the person's config names but that does not exist yet: the agent must not make it.
    personGit('config', 'core.hooksPath', 'team-hooks');
    const config = readFileSync(join(lib, '.git', 'config'), 'utf8');
    const t = await open(f.project);
    expect(t.id, JSON.stringify(t)).toBeDefined();
    for (const line of [
      `printf '[core]\\n\\tfsmonitor = touch ${canary}\\n' >> vendor/lib/.git/config`,
      `git -C vendor/lib config core.fsmonitor 'touch ${canary}'`,
      `printf '#!/bin/sh\\ntouch ${canary}\\n' > vendor/lib/.git/hooks/post-commit && chmod +x vendor/lib/.git/hooks/post-commit`,
      `mv vendor/lib/.git vendor/lib/.git-x`,
      `mkdir -p vendor/lib/team-hooks; printf '#!/bin/sh\ntouch ${canary}\n' > vendor/lib/team-hooks/post-commit && chmod +x vendor/lib/team-hooks/post-commit`,
    ]) {
      const r = await send(t.id!, line);
      expect(r.exitCode, `${line}: ${r.output}`).not.toBe(0);
    }
    // Its work tree is the workspace's: the agent still edits files there.
    await ok(t.id!, 'echo more >> vendor/lib/l.txt');
    expect(readFileSync(join(lib, '.git', 'config'), 'utf8')).toBe(config);
    personGit('status');
    personGit('commit', '-q', '-am', 'by the person');
    expect(existsSync(canary)).toBe(false);
  });
});
