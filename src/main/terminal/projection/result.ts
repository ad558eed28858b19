/** A settled call's answer: the projected output (or the screen), its echo removed, and where it ended. */
import type { ClosedBy, Evidence, Origin, SendResult } from '../../../shared/types.js';
import { stripEcho } from './echo.js';
import type { OutputProjector } from './projection.js';

export interface ResultContext {
  screenText(): string;
  cwd: string | null;
  origin: Origin;
  closedBy: ClosedBy;
  /** The cursor of the position this result ends at. */
  cursor(): string;
  now(): number;
}

export function sendResult(
  ctx: ResultContext,
  projector: OutputProjector,
  echo: string | null,
  status: SendResult['status'],
  evidence: Evidence,
  command: string | null,
  exitCode: number | null,
  startedAt: number,
): SendResult {
  const projected = projector.snapshot();
  let output = projected.altScreen ? ctx.screenText() : projected.output;
  if (echo) {
    // With echo off (a password), only the Enter shows: the line the input ended.
    const echoed = output.startsWith(echo.split(/\r?\n/)[0] ?? '');
    output = stripEcho(output, echo);
    if (!echoed && output.startsWith('\n')) output = output.slice(1);
  }
  return {
    status,
    evidence,
    command,
    exitCode,
    cwd: ctx.cwd,
    output,
    truncated: projected.truncated,
    cursor: ctx.cursor(),
    control: ctx.origin === 'agent' ? 'agent' : 'user',
    handoff: null,
    approval: null,
    closedBy: status === 'exited' ? ctx.closedBy : null,
    durationMs: Math.round(ctx.now() - startedAt),
  };
}
