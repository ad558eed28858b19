import { win32 } from 'node:path';

/**
 * Git Bash on Windows. Git for Windows does not put bash on PATH; a plain `bash` there is usually
 * `System32\bash.exe`, the WSL launcher, which runs Linux and cannot open a Windows rc path.
 * The install locations are the ones VS Code looks in (terminalProfiles.ts, getGitBashPaths).
 */
export function gitBashCandidates(env: NodeJS.ProcessEnv, gitExe: string | null): string[] {
  const dirs = new Set<string>();
  // git.exe lives in <install>\cmd or <install>\mingw64\bin.
  if (gitExe) dirs.add(win32.resolve(win32.dirname(gitExe), '..', '..'));
  for (const dir of [env.ProgramW6432, env.ProgramFiles, env['ProgramFiles(x86)'] ?? env['ProgramFiles(X86)']]) if (dir) dirs.add(dir);
  // Per-user installs of Git for Windows.
  if (env.LOCALAPPDATA) dirs.add(win32.join(env.LOCALAPPDATA, 'Programs'));
  const paths: string[] = [];
  for (const dir of dirs) {
    paths.push(win32.join(dir, 'Git', 'bin', 'bash.exe'), win32.join(dir, 'Git', 'usr', 'bin', 'bash.exe'), win32.join(dir, 'usr', 'bin', 'bash.exe'));
  }
  if (env.USERPROFILE) {
    for (const app of ['git', 'git-with-openssh']) paths.push(win32.join(env.USERPROFILE, 'scoop', 'apps', app, 'current', 'bin', 'bash.exe'));
  }
  return paths;
}

export function findGitBash(env: NodeJS.ProcessEnv, gitExe: string | null, exists: (path: string) => boolean): string | null {
  return gitBashCandidates(env, gitExe).find(exists) ?? null;
}

/** `System32\bash.exe` and `wsl.exe`: they start Linux, where Tandem's Windows rc paths mean nothing. */
export function isWslLauncher(path: string): boolean {
  return /(^|[\\/])wsl\.exe$/i.test(path) || /[\\/](system32|sysnative)[\\/]bash\.exe$/i.test(path);
}
