/**
 * A refused write explains itself (issue 24): when a confined command fails on a path the
 * sandbox keeps read-only or hides, its result carries a `sandbox` note naming the path, what
 * the sandbox does there and why, so the agent does not retry blindly. Found from the error
 * text the usual tools print (coreutils, bash redirections, Python's OSError, git), matched
 * against the terminal's own layout; a path the sandbox does not govern gets no note.
 */
import { posix } from 'node:path';
import { inAgentHome, type SandboxSpec, within } from './types.js';

export interface SandboxNote {
  /** The path the command failed on, absolute. */
  path: string;
  /** What the sandbox does there. */
  access: 'read-only' | 'hidden';
  /** The terminal's sandbox mode. */
  mode: SandboxSpec['mode'];
  /** One sentence for the agent. */
  why: string;
}

const errorPattern = /Read-only file system|Device or resource busy|Permission denied|Operation not permitted|No such file or directory/;
/** The paths a line names: quoted ones (coreutils, Python), then bare ones (bash, git). */
const quoted = /'([^'\n]+)'|"([^"\n]+)"/g;
const bare = /(?:^|\s)((?:\/|\.{1,2}\/|~\/|\.)[^\s:'"]*)/g;
const maxLines = 200;

function classify(spec: SandboxSpec, path: string): Pick<SandboxNote, 'access' | 'why'> | null {
  const home = spec.home;
  const git = [...spec.protectedPaths, ...(spec.gitAnchors ?? [])];
  if (git.some((entry) => within(path, entry.path))) {
    return {
      access: 'read-only',
      why: 'The repository’s .git configuration, hooks and the .git entry itself are protected in a confined terminal (the person’s own git would run them); objects, refs and the index stay writable.',
    };
  }
  // The agent's home lies inside Tandem's hidden state, and is its own.
  const inOwnHome = home !== undefined && within(path, home.agentHome);
  if (!inOwnHome && spec.hidden.some((entry) => within(path, entry.path))) {
    return {
      access: 'hidden',
      why: 'The sandbox hides this path (credentials, Tandem’s state or a socket of the machine); ask the person if the task needs it.',
    };
  }
  if (home) {
    const read = home.read.find((entry) => within(path, entry.dest) || within(path, inAgentHome(home, entry.dest)));
    if (read)
      return {
        access: 'read-only',
        why: 'The person’s home is shown read-only here (their toolchains and startup files); write under $HOME, the agent’s own home, instead.',
      };
    if (within(path, home.path) && !within(path, spec.workspace) && !within(path, home.agentHome)) {
      return { access: 'hidden', why: `The person’s home is not visible in a confined terminal; $HOME is the agent’s own (${home.agentHome}).` };
    }
  }
  const writable = [spec.workspace, '/tmp', ...spec.writable, ...(home ? [home.agentHome] : [])];
  if (spec.mode === 'read-only') return { access: 'read-only', why: 'This terminal’s sandbox is read-only: nothing can be written.' };
  if (!writable.some((dir) => within(path, dir)))
    return { access: 'read-only', why: `Outside the workspace (${spec.workspace}), $TMPDIR and $HOME the filesystem is read-only in a confined terminal.` };
  return null;
}

/** The note for a failed command's output, or null when no refusal of the sandbox shows in it. */
export function explainRefusal(spec: SandboxSpec, output: string, cwd: string | null): SandboxNote | null {
  const lines = output.split('\n').slice(-maxLines);
  for (const line of lines) {
    const error = errorPattern.exec(line)?.[0];
    if (!error) continue;
    const named = [...[...line.matchAll(quoted)].map((m) => m[1] ?? m[2]!), ...[...line.matchAll(bare)].map((m) => m[1]!)];
    for (const raw of named) {
      const expanded = raw.startsWith('~/') && spec.home ? posix.join(spec.home.agentHome, raw.slice(2)) : raw;
      const path = posix.isAbsolute(expanded) ? posix.normalize(expanded) : posix.resolve(cwd ?? spec.workspace, expanded);
      const found = classify(spec, path);
      // A missing file is the sandbox's doing only where it hides.
      if (found && (error !== 'No such file or directory' || found.access === 'hidden')) return { path, mode: spec.mode, ...found };
    }
  }
  return null;
}
