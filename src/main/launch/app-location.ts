/**
 * Where the app runs from, on macOS: a copy inside the disk image it came on (/Volumes/…) or a
 * translocated copy (Gatekeeper runs an app started from where it was downloaded, still
 * quarantined, from a random read-only path under /private/var/folders/…/AppTranslocation/).
 * Neither path outlives the run, so no agent configuration may name one: the app asks to be
 * moved to /Applications instead, as VS Code does (Electron's app.moveToApplicationsFolder()).
 * The decision lives here; src/main/electron/app-location.ts only asks Electron.
 */
export type TemporaryLocation = 'disk-image' | 'translocated';

/** Why `path` does not last, or null. Only macOS has these locations. */
export function temporaryLocation(path: string, platform: NodeJS.Platform): TemporaryLocation | null {
  if (platform !== 'darwin') return null;
  if (/^(?:\/private)?\/var\/folders\/[^/]+\/[^/]+\/[^/]+\/AppTranslocation\//.test(path) || path.includes('/AppTranslocation/')) return 'translocated';
  // A disk image mounts under /Volumes; so does an external disk, where an app may stay, but
  // Tandem cannot tell them apart without hdiutil: it asks for /Applications in both cases.
  if (path.startsWith('/Volumes/')) return 'disk-image';
  return null;
}

/** One sentence saying how to move the app, for the pairing screen and the dialog. */
export function moveInstruction(location: TemporaryLocation): string {
  return location === 'translocated'
    ? 'Tandem is running from a temporary copy macOS made because it was opened where it was downloaded. Quit Tandem, drag Tandem.app into the Applications folder, and open it from there; agent configurations then point at a path that lasts.'
    : 'Tandem is running from its disk image (or another volume under /Volumes). Quit Tandem, drag Tandem.app into the Applications folder, eject the disk image, and open Tandem from Applications; agent configurations then point at a path that lasts.';
}

/** The first temporary path among a bridge command's program and arguments. */
export function bridgeLocation(bridge: { command: string; args: string[] }, platform: NodeJS.Platform): TemporaryLocation | null {
  for (const part of [bridge.command, ...bridge.args]) {
    const found = temporaryLocation(part, platform);
    if (found) return found;
  }
  return null;
}

/** Whether the app offers to move itself: an installed macOS app outside /Applications, at a temporary path. */
export function shouldOfferMove(facts: {
  platform: NodeJS.Platform;
  packaged: boolean;
  inApplicationsFolder: boolean;
  execPath: string;
}): TemporaryLocation | null {
  if (facts.platform !== 'darwin' || !facts.packaged || facts.inApplicationsFolder) return null;
  return temporaryLocation(facts.execPath, facts.platform);
}
