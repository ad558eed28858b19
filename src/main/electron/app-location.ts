import { app, dialog } from 'electron';
import { moveInstruction, shouldOfferMove } from '../launch/app-location';

/**
 * Offers to move an app started from its disk image or a translocated copy to /Applications
 * (Electron's app.moveToApplicationsFolder(), which relaunches it from there). Declining keeps
 * it running; agent configurations then show the instruction instead of a temporary path
 * (src/main/agent/bridge/configs.ts). The decision is launch/app-location.ts.
 */
export async function offerMoveToApplications(): Promise<void> {
  const location = shouldOfferMove({
    platform: process.platform,
    packaged: app.isPackaged,
    inApplicationsFolder: process.platform === 'darwin' && app.isInApplicationsFolder(),
    execPath: process.execPath,
  });
  if (!location) return;
  const { response } = await dialog.showMessageBox({
    type: 'question',
    buttons: ['Move to Applications', 'Not now'],
    defaultId: 0,
    cancelId: 1,
    message: 'Move Tandem to the Applications folder?',
    detail: moveInstruction(location),
  });
  if (response !== 0) return;
  try {
    app.moveToApplicationsFolder();
  } catch (error) {
    dialog.showErrorBox('Tandem', `Tandem could not move itself: ${(error as Error).message}. ${moveInstruction(location)}`);
  }
}
