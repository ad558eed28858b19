/**
 * Throughput of a 64 MiB stream from the PTY to a connected WebSocket client, and the host's
 * event-loop delay during the flood. Pending: the host and its WebSocket transport do not exist
 * yet. Replace `pending` with a `run` when they do (baselines: raw node-pty reading the same
 * stream, and a bare @xterm/headless parse of it).
 */
import type { Figure } from '../lib/types.js';

export const throughputFigure: Figure = {
  id: 'throughput',
  title: 'Throughput to a WebSocket client',
  pending: 'needs the host WebSocket transport (issue: host layer)',
  rows: [
    {
      name: 'throughput.websocket.64mib',
      unit: 'x',
      target: { metric: 'ratio', op: '>=', value: 0.8 },
      description: '64 MiB colored `yes | head -c` from the PTY to a WebSocket client; baseline: raw node-pty reading the same stream',
    },
    {
      name: 'throughput.event-loop-delay.p99',
      unit: 'ms',
      target: { metric: 'median', op: '<', value: 50 },
      description: "the host's event-loop delay p99 during the 64 MiB flood",
    },
  ],
};
