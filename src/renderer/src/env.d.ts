import type { TandemBridge } from '../../shared/wire.js';

declare global {
  interface Window {
    /** Present inside Electron (set by the preload); absent when the UI is served to a browser. */
    readonly tandem?: TandemBridge;
  }
}
