import { contextBridge } from 'electron';

/**
 * What the renderer sees as `window.tandem`. Deliberately small: terminal operations arrive
 * with the host contract, as named, typed methods, never as raw ipcRenderer.
 */
export interface TandemBridge {
  readonly platform: NodeJS.Platform;
  readonly versions: { readonly electron: string; readonly chrome: string; readonly node: string };
}

const bridge: TandemBridge = {
  platform: process.platform,
  versions: {
    electron: process.versions.electron,
    chrome: process.versions.chrome,
    node: process.versions.node,
  },
};

contextBridge.exposeInMainWorld('tandem', bridge);
