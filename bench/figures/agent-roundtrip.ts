/**
 * Agent round trip for `echo` through the stdio MCP bridge and over HTTP. Pending until the
 * agent layer exists; the baselines are the same as the engine round trip's (bare node-pty with
 * a prompt marker, tmux send-keys/capture-pane), see `roundtrip.ts`.
 */
import type { Figure } from '../lib/types.js';

export const agentRoundtripFigure: Figure = {
  id: 'agent-roundtrip',
  title: 'Agent round trip for echo (MCP)',
  pending: 'needs the agent layer (stdio bridge and HTTP MCP endpoint)',
  rows: [
    {
      name: 'roundtrip.bridge.echo',
      unit: 'ms',
      target: { metric: 'median', op: '<=', value: 3 },
      description: 'terminal_send of `echo hi` through the stdio bridge until done',
    },
    {
      name: 'roundtrip.http.echo',
      unit: 'ms',
      target: null,
      description: 'terminal_send of `echo hi` over the HTTP MCP endpoint until done',
    },
  ],
};
