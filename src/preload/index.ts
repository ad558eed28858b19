import { contextBridge, ipcRenderer } from 'electron';
import { createBridge } from './bridge';

export type { TandemBridge } from './bridge';
export type { IpcReply } from '../shared/wire';

/**
 * `window.tandem`: runtime facts plus the contract's operations and events by name (checked
 * against the contract's table); never raw ipcRenderer.
 */
const bridge = createBridge(ipcRenderer, {
  platform: process.platform,
  versions: {
    electron: process.versions.electron,
    chrome: process.versions.chrome,
    node: process.versions.node,
  },
});

contextBridge.exposeInMainWorld('tandem', bridge);
