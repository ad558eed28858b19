/** Keystroke echo through the WebSocket transport. Pending until the host transport exists. */
import type { Figure } from '../lib/types.js';

export const keystrokeFigure: Figure = {
  id: 'keystroke',
  title: 'Keystroke echo over WebSocket',
  pending: 'needs the host WebSocket transport (issue: host layer)',
  rows: [
    {
      name: 'keystroke.websocket.echo',
      unit: 'ms',
      target: { metric: 'median', op: '<=', value: 5 },
      description: 'one typed character from a WebSocket client until its echo arrives back',
    },
  ],
};
