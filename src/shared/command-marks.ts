/**
 * Command marks: where each command started in a terminal's scrollback and how it ended. The
 * host learns them only from its shell integration's private markers (src/main/terminal/
 * markers.ts, a secret per terminal), never from OSC 133/633 text a program prints, and both
 * its headless emulator and every view place them with the same rule (`commandLineOffset`) at the
 * same position of the output stream.
 */
import { z } from 'zod';

export const markStatusSchema = z.enum(['running', 'success', 'failure', 'interrupted', 'waiting_input']);
export type MarkStatus = z.output<typeof markStatusSchema>;

/** Commands longer than this are cut in marks (the command line of a mark is for copying and re-running). */
export const markCommandMaxChars = 4096;

const markFields = {
  id: z.number().int().min(0),
  command: z.string().max(markCommandMaxChars).nullable(),
  status: markStatusSchema,
  exitCode: z.number().int().nullable(),
};

/**
 * A mark in an attach snapshot: `line` (the command's line) and `endLine` (the line its end
 * marker came on, null while it runs) count from the snapshot's first line; `cursorLine` in the
 * same list says where the snapshot leaves the cursor, so a view whose scrollback dropped the
 * snapshot's first lines still places each mark right (relative to its cursor).
 */
export const snapshotMarksSchema = z.object({
  cursorLine: z.number().int(),
  list: z.array(z.object({ ...markFields, line: z.number().int().min(0), endLine: z.number().int().min(0).nullable() })),
});
export type SnapshotMarks = z.output<typeof snapshotMarksSchema>;

/**
 * A mark's news in an output frame, at character `at` of the frame's data: `start` (the view
 * places a marker there), `end` (the command ended there: its output stops there) or `status`
 * (waiting for input, running again, or the command line learnt after the end).
 */
export const frameMarkSchema = z.object({ ...markFields, at: z.number().int().min(0), kind: z.enum(['start', 'end', 'status']) });
export type FrameMark = z.output<typeof frameMarkSchema>;

/** What a mark's end says: 130 is SIGINT's exit (bash, zsh, sh), and an interrupt the host or the person sent counts too. */
export function endStatus(exitCode: number | null, interruptSent: boolean): MarkStatus {
  if (exitCode === 0) return 'success';
  if (exitCode === 130 || (interruptSent && exitCode !== null)) return 'interrupted';
  // No exit code (a marker the shell could not fill): it ended, and nothing says it failed.
  return exitCode === null ? 'success' : 'failure';
}

/** The part of a buffer both xterm.js builds (headless and browser) expose. */
export interface MarkBuffer {
  readonly cursorX: number;
  readonly cursorY: number;
  readonly baseY: number;
  getLine(y: number): { readonly isWrapped: boolean } | undefined;
}

/**
 * Where a command's mark goes, relative to the cursor, at its start marker: the shell printed
 * the marker after the line editor's newline, so the command line is the line above the cursor
 * (its first row when it wrapped). A cursor not at column 0 (no newline echoed) marks its own line.
 */
export function commandLineOffset(buffer: MarkBuffer): number {
  const cursor = buffer.baseY + buffer.cursorY;
  if (buffer.cursorX !== 0 || cursor === 0) return 0;
  let offset = -1;
  while (cursor + offset > 0 && buffer.getLine(cursor + offset)?.isWrapped) offset -= 1;
  return offset;
}
