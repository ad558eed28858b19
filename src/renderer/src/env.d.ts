import type { TandemBridge } from '../../preload/index';

declare global {
  interface Window {
    /** Present inside Electron (set by the preload); absent when the UI is served to a browser. */
    readonly tandem?: TandemBridge;
  }
}
