import { release } from 'node:os';

/**
 * Which pseudoconsole Windows terminals get. node-pty 1.1 (and 1.2) default to the conhost
 * built into Windows (no passthrough, whole-screen repaints with absolute cursor moves, kill
 * forks a helper through the app binary, and a shell that exits by itself leaves its conhost
 * behind: node-pty issue 965) and silently fall back to winpty below build 18309. Tandem asks
 * for the ConPTY that node-pty bundles (conpty.dll and OpenConsole.exe): its kill does not
 * fork, and it releases the pseudoconsole when the last client goes.
 */
export const minConptyBuild = 18309;

/**
 * node-pty versions whose Windows terminals are known to end before Tandem's first write:
 * 1.2.0-beta.15 ties the ConPTY connection to a 5 s worker handshake and ends the terminal
 * when it fails (node-pty issue 955, https://github.com/microsoft/node-pty/issues/955). The
 * pin in package.json stays off them (tests/unit/windows-node-pty.test.ts).
 */
export const nodePtyVersionsExitingBeforeFirstWrite: readonly string[] = ['1.2.0-beta.15'];

/** The build from `os.release()` ("10.0.22631" gives 22631); 0 when it cannot be read. */
export function windowsBuildNumber(osRelease: string): number {
  const match = /^\d+\.\d+\.(\d+)/.exec(osRelease);
  return match ? Number(match[1]) : 0;
}

export interface ConptyOptions {
  useConpty: true;
  useConptyDll: true;
}

/** node-pty's Windows options; throws a sentence for a Windows too old for ConPTY. */
export function conptyOptions(osRelease: string = release()): ConptyOptions {
  const build = windowsBuildNumber(osRelease);
  if (build < minConptyBuild) {
    throw new Error(`Tandem needs Windows 10 version 1903 (build ${minConptyBuild}) or later for its terminals; this is build ${build || 'unknown'}.`);
  }
  return { useConpty: true, useConptyDll: true };
}

export interface WindowsPtyInfo {
  backend: 'conpty';
  buildNumber: number;
}

/**
 * xterm's `windowsPty` option for a terminal fed by ConPTY, in the host's emulator and in the
 * renderer: without it xterm reflows lines on resize while ConPTY repaints them, and lines are
 * doubled. The OS build is given, as VS Code does, even though the bundled ConPTY is newer.
 */
export function windowsPtyInfo(platform: NodeJS.Platform = process.platform, osRelease: string = release()): WindowsPtyInfo | undefined {
  return platform === 'win32' ? { backend: 'conpty', buildNumber: windowsBuildNumber(osRelease) } : undefined;
}
