import { isAbsolute, join, relative } from 'node:path';

/**
 * Places an agent's allowed commands never read without asking, and the sandbox hides: the
 * kernel's views of other processes and devices, Tandem's own state, and where tools keep
 * credentials. Paths under the home directory are relative to it; `*` ends a name prefix.
 */
export const systemSensitivePaths: readonly string[] = ['/proc', '/sys', '/dev'];

export const credentialPaths: readonly string[] = [
  '.ssh',
  '.aws',
  '.gnupg',
  '.netrc',
  '.npmrc',
  '.pypirc',
  '.yarnrc',
  '.yarnrc.yml',
  '.git-credentials',
  '.config/git/credentials',
  '.config/gh',
  '.config/hub',
  '.config/glab-cli',
  '.docker/config.json',
  '.kube',
  '.azure',
  '.config/gcloud',
  '.oci',
  '.terraform.d',
  '.config/doctl',
  '.vault-token',
  '.config/op',
  '.config/Bitwarden CLI',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.m2/settings.xml',
  '.gradle/gradle.properties',
  '.nuget/NuGet/NuGet.Config',
  '.config/NuGet/NuGet.Config',
  '.password-store',
  '.local/share/keyrings',
  '.mozilla',
  '.config/google-chrome',
  '.config/chromium',
  '.claude*',
  '.codex',
  '.gemini',
  '.cursor',
  '.config/Cursor',
  '.config/Code/User/globalStorage',
  '.config/github-copilot',
  '.aider*',
  '.continue',
  '.bash_history',
  '.zsh_history',
  '.local/share/fish/fish_history',
  '.psql_history',
  '.mysql_history',
  '.local/share/powershell/PSReadLine',
];

export interface SensitiveRoots {
  home: string;
  /** Tandem's state directory (src/main/state-dir.ts) and discovery directory, when known. */
  tandemDirs: readonly string[];
}

function within(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** Whether an absolute, already resolved path is one of the sensitive places or inside one. */
export function isSensitivePath(path: string, roots: SensitiveRoots): boolean {
  if (systemSensitivePaths.some((root) => within(path, root))) return true;
  if (roots.tandemDirs.some((root) => within(path, root))) return true;
  const rel = relative(roots.home, path);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return false;
  return credentialPaths.some((entry) => {
    if (!entry.endsWith('*')) return within(path, join(roots.home, entry));
    const prefix = entry.slice(0, -1);
    const first = rel.split('/')[0]!;
    return first.startsWith(prefix);
  });
}

/**
 * Whether a directory tree rooted at an absolute, resolved path holds a sensitive place (or is
 * inside one): what a recursive search starting there could read. Symlinks inside are not
 * followed by the programs allowed to read trees (their following options ask).
 */
export function holdsSensitivePath(path: string, roots: SensitiveRoots): boolean {
  if (isSensitivePath(path, roots)) return true;
  const places = [
    ...systemSensitivePaths,
    ...roots.tandemDirs,
    ...credentialPaths.map((entry) => (entry.endsWith('*') ? roots.home : join(roots.home, entry))),
  ];
  return places.some((place) => within(place, path));
}
