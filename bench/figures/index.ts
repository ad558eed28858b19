/**
 * The registry: every figure `npm run bench` runs, in table order. To add a figure, write a
 * module in this folder exporting a `Figure` (see ../lib/types.ts) and list it here.
 */
import type { Figure } from '../lib/types.js';
import { agentRoundtripFigure } from './agent-roundtrip.js';
import { cpuFigure } from './cpu.js';
import { exitBytesFigure } from './exit-bytes.js';
import { firstCommandFigure } from './first-command.js';
import { interruptFigure } from './interrupt.js';
import { keystrokeFigure } from './keystroke.js';
import { marksFigure } from './marks.js';
import { memoryFigure } from './memory.js';
import { readinessFigure } from './readiness.js';
import { remoteFigure } from './remote.js';
import { recordingFigure } from './recording.js';
import { roundtripFigure } from './roundtrip.js';
import { soakFigure } from './soak.js';
import { sandboxFigure } from './sandbox.js';
import { seekFigure } from './seek.js';
import { startupFigure } from './startup.js';
import { throughputFigure } from './throughput.js';
import { waitingFigure } from './waiting.js';

export const figures: Figure[] = [
  roundtripFigure,
  agentRoundtripFigure,
  firstCommandFigure,
  throughputFigure,
  interruptFigure,
  startupFigure,
  memoryFigure,
  keystrokeFigure,
  readinessFigure,
  waitingFigure,
  soakFigure,
  sandboxFigure,
  cpuFigure,
  exitBytesFigure,
  remoteFigure,
  marksFigure,
  seekFigure,
  recordingFigure,
];
