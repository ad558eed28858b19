/**
 * Each agent's own home (Linux). Inside a confined terminal `$HOME` is the agent's directory in
 * Tandem's state (`<state>/sandbox/<agent>/home`, the same path inside and out, kept across that
 * agent's terminals): what tools write to their home (viminfo, histories, caches, `npm config`)
 * lands there, and the person's home is an empty read-only directory. The person's startup
 * files still work: each read entry is shown both at its own path (absolute paths an rc file
 * names) and at the same place in the agent's home (`$HOME/.cargo/env`, `$HOME/.pyenv`).
 *
 * Shown through from the person's home, read-only: a read list (toolchains and their install
 * directories, startup files, editor settings: nothing that holds a secret) plus what the person
 * adds; `~/.gitconfig` only as a filtered copy (an allow list of keys: no credentials, nothing
 * that runs a program).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, constants, lstatSync, mkdirSync, openSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, posix } from 'node:path';
import type { HomeBind } from './types.js';
import { within } from './types.js';

/**
 * Read from the person's home by default, relative to it. Startup files (so the person's PATH
 * and toolchains work for the agent), language managers' install directories, editor settings.
 * Deliberately not whole configuration trees (`~/.cargo`, `~/.config`): they hold tokens.
 */
export const defaultHomeReadList: readonly string[] = [
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.profile',
  '.bash_aliases',
  '.zshenv',
  '.zprofile',
  '.zshrc',
  '.zlogin',
  '.oh-my-zsh',
  '.inputrc',
  '.cargo/bin',
  '.cargo/env',
  '.rustup',
  '.nvm',
  '.pyenv',
  '.rbenv',
  '.nodenv',
  '.goenv',
  '.asdf',
  '.local/bin',
  '.local/share/mise',
  '.deno',
  '.bun',
  '.volta',
  '.sdkman',
  '.dotnet',
  'go/bin',
  '.vimrc',
  '.vim',
  '.config/nvim',
  '.config/powershell',
  '.nanorc',
  '.editorconfig',
];

/**
 * Directories inside read entries that tools rewrite at every start (pyenv's rehash in the rc
 * file): each agent gets its own writable one, so the start prints no "isn't writable".
 */
export const toolWritableDirs: readonly string[] = ['.pyenv/shims', '.rbenv/shims', '.nodenv/shims', '.goenv/shims'];

/** git configuration files of the person's home that reach an agent only filtered. */
export const gitConfigFiles: readonly string[] = ['.gitconfig', '.config/git/config'];

/**
 * Keys of the person's git configuration an agent's git gets: who they are and how they like
 * git to behave. Everything else is left out: credentials and URLs that may carry tokens
 * (`credential.*`, `http.*`, `url.*`), every key that names a program (`core.sshCommand`,
 * `core.pager`, `core.editor`, `core.fsmonitor`, `core.hooksPath`, `diff.*.textconv`,
 * `diff.external`, `filter.*`, `gpg.*`, `sequence.editor`, `pager.*`), `include`/`includeIf`,
 * and templates (`init.templateDir` copies hooks). An entry ending in `.` names a section.
 */
const gitKeysAllowed = new Set([
  'user.name',
  'user.email',
  'user.useconfigonly',
  'author.name',
  'author.email',
  'committer.name',
  'committer.email',
  'core.autocrlf',
  'core.eol',
  'core.safecrlf',
  'core.ignorecase',
  'core.quotepath',
  'core.whitespace',
  'core.filemode',
  'core.symlinks',
  'core.precomposeunicode',
  'core.excludesfile',
  'core.attributesfile',
  'core.abbrev',
  'init.defaultbranch',
  'pull.rebase',
  'pull.ff',
  'push.default',
  'push.autosetupremote',
  'fetch.prune',
  'merge.conflictstyle',
  'merge.ff',
  'rebase.autosquash',
  'rebase.autostash',
  'rebase.updaterefs',
  'rerere.enabled',
  'diff.algorithm',
  'diff.renames',
  'diff.colormoved',
  'diff.mnemonicprefix',
  'branch.sort',
  'tag.sort',
  'column.ui',
  'log.date',
  'log.decorate',
  'status.short',
  'status.branch',
  'status.showuntrackedfiles',
  'submodule.recurse',
  'help.autocorrect',
  'commit.verbose',
  'format.signoff',
  'safe.directory',
]);
const gitSectionsAllowed = ['color.', 'advice.'];

export function gitKeyAllowed(key: string, value: string): boolean {
  const lower = key.toLowerCase();
  if (gitKeysAllowed.has(lower) || gitSectionsAllowed.some((section) => lower.startsWith(section))) return true;
  // An alias that is a git command is harmless; one starting with `!` runs a shell.
  return lower.startsWith('alias.') && !value.trimStart().startsWith('!');
}

function quoteValue(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t')}"`;
}

/** git's `--list -z` output (`key\nvalue\0`, no includes followed) as a filtered config file. */
export function filterGitConfig(listed: string): string {
  const sections = new Map<string, string[]>();
  for (const record of listed.split('\0')) {
    if (record === '') continue;
    const newline = record.indexOf('\n');
    const key = newline < 0 ? record : record.slice(0, newline);
    const value = newline < 0 ? 'true' : record.slice(newline + 1);
    if (!gitKeyAllowed(key, value)) continue;
    const first = key.indexOf('.');
    const last = key.lastIndexOf('.');
    if (first <= 0 || last === key.length - 1) continue;
    const section = key.slice(0, first);
    const sub = first === last ? null : key.slice(first + 1, last);
    if (!/^[A-Za-z0-9.-]+$/.test(section) || !/^[A-Za-z][A-Za-z0-9-]*$/.test(key.slice(last + 1))) continue;
    if (sub !== null && /[\n\0]/.test(sub)) continue;
    const header = sub === null ? `[${section}]` : `[${section} "${sub.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"]`;
    const lines = sections.get(header) ?? [];
    lines.push(`\t${key.slice(last + 1)} = ${quoteValue(value)}`);
    sections.set(header, lines);
  }
  return [...sections].map(([header, lines]) => `${header}\n${lines.join('\n')}\n`).join('');
}

/** One filtered config per file version, per process: git runs once, not at every open. */
const filteredCache = new Map<string, { stamp: string; text: string }>();

/** The filtered text of one of the person's git config files (empty when git cannot read it). */
export function filteredGitConfig(path: string): string {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat?.isFile()) return '';
  const stamp = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
  const cached = filteredCache.get(path);
  if (cached?.stamp === stamp) return cached.text;
  const run = spawnSync('git', ['config', '--file', path, '--no-includes', '--list', '-z'], {
    encoding: 'utf8',
    timeout: 5000,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  });
  const text = run.status === 0 ? filterGitConfig(run.stdout) : '';
  filteredCache.set(path, { stamp, text });
  return text;
}

/** `~/x` and absolute paths, as the person writes them; anything else is left out. */
export function homePath(entry: string, home: string): string | null {
  const trimmed = entry.trim();
  if (trimmed === '~') return home;
  if (trimmed.startsWith('~/')) return posix.normalize(posix.join(home, trimmed.slice(2)));
  return posix.isAbsolute(trimmed) ? posix.normalize(trimmed) : null;
}

export interface AgentHomeInput {
  /** The person's home (resolved). */
  home: string;
  /** The agent's directory in Tandem's state. */
  agentDir: string;
  /** The person's additions (`~/x` or absolute; only paths inside the home mean anything here). */
  extra: readonly string[];
}

export interface AgentHome {
  /** The agent's home on the host, also `$HOME` inside. */
  agentHome: string;
  read: HomeBind[];
  writable: HomeBind[];
}

/**
 * Resolves what the agent's home shows, and makes the read entries' mount points in it.
 * Read entries are bound from their real path; one that resolves outside the home (a symlink
 * to /opt) is bound from there too. `skip` drops entries that would shadow the workspace.
 */
export function agentHome({ home, agentDir, extra }: AgentHomeInput, skip: (dest: string) => boolean = () => false): AgentHome {
  const own = posix.join(agentDir, 'home');
  mkdirSync(own, { recursive: true, mode: 0o700 });
  const read: HomeBind[] = [];
  const seen = new Set<string>();
  const named = [...defaultHomeReadList.map((rel) => posix.join(home, rel)), ...extra.map((entry) => homePath(entry, home))];
  for (const dest of named) {
    if (dest === null || dest === home || !within(dest, home) || seen.has(dest) || skip(dest)) continue;
    if (gitConfigFiles.some((rel) => posix.join(home, rel) === dest)) continue;
    const stat = statSync(dest, { throwIfNoEntry: false });
    if (!stat) continue;
    seen.add(dest);
    read.push({ source: realpathSync(dest), dest, dir: stat.isDirectory() });
  }
  for (const rel of gitConfigFiles) {
    const dest = posix.join(home, rel);
    if (skip(dest)) continue;
    const text = filteredGitConfig(dest);
    if (text === '') continue;
    const copy = posix.join(agentDir, 'gitconfig', rel.replace(/\//g, '_'));
    mkdirSync(dirname(copy), { recursive: true, mode: 0o700 });
    writeFileSync(copy, text, { mode: 0o600 });
    read.push({ source: copy, dest, dir: false });
  }
  // A read entry inside another is shown by it already: only the outermost get mount points.
  const outer = read.filter((entry) => !read.some((other) => other !== entry && other.dir && within(entry.dest, other.dest)));
  for (const entry of outer) prepareMountPoint(own, home, entry.dest, entry.dir);
  const writable: HomeBind[] = [];
  for (const rel of toolWritableDirs) {
    const dest = posix.join(home, rel);
    if (!read.some((entry) => entry.dir && within(dest, entry.dest)) || !statSync(dest, { throwIfNoEntry: false })?.isDirectory()) continue;
    const dir = posix.join(agentDir, 'tools', rel.replace(/\//g, '_'));
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writable.push({ source: dir, dest, dir: true });
  }
  return { agentHome: own, read, writable };
}

/**
 * Makes `dest` (a path under `home`) exist in the agent's home as a directory or file, so
 * bubblewrap finds its mount point there even when that home is mounted read-only. The agent
 * writes in that home from its other terminals, so every step goes through a descriptor of the
 * directory above it (its /proc path), never a path it could swap for a link meanwhile: what is
 * in the way (a link, the wrong kind) is moved aside, and each entry is made only if it is not
 * there (O_EXCL), so the host never writes or removes through a link (a black-box round had it
 * truncate a file of the person's by swapping `.cargo` for a link as the open ran).
 */
export function prepareMountPoint(agentHomeDir: string, home: string, dest: string, dir: boolean): void {
  const rel = posix.relative(home, dest);
  if (rel === '' || rel.startsWith('..')) return;
  const parts = rel.split('/');
  let fd = openSync(agentHomeDir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    for (let i = 0; i < parts.length; i++) {
      const wantDir = i < parts.length - 1 || dir;
      const at = `/proc/self/fd/${fd}/${parts[i]!}`;
      let stat = lstatSync(at, { throwIfNoEntry: false });
      if (stat && (stat.isSymbolicLink() || stat.isDirectory() !== wantDir)) {
        // Aside, not removed: a removal would walk what the agent put there.
        renameSync(at, `/proc/self/fd/${fd}/.tandem-aside-${randomBytes(6).toString('hex')}`);
        stat = undefined;
      }
      if (!stat) {
        if (wantDir) mkdirSync(at, { mode: 0o700 });
        else closeSync(openSync(at, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600));
      }
      if (!wantDir) return;
      const next = openSync(at, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
      closeSync(fd);
      fd = next;
    }
  } finally {
    closeSync(fd);
  }
}
