/**
 * The MCP tools of the agent API contract (agent-api.md): names, argument schemas (validated
 * in the handler so a malformed call gets `invalid_argument` naming the field) and the JSON
 * schemas listed to clients. The stdio bridge lists the same definitions without a host.
 */
import { z } from 'zod';
import { findRefusedControl } from '../../shared/control-chars.js';
import { DEFAULT_LIMITS } from '../../shared/limits.js';
import { SIGNALS } from '../../shared/types.js';

const id = z.string().min(1).max(64).describe('Terminal id from terminal_open or terminal_list.');
const waitMs = z.number().int().min(0).max(DEFAULT_LIMITS.maxWaitMs).optional().describe(`How long the call may wait in ms (default ${DEFAULT_LIMITS.defaultWaitMs}, max ${DEFAULT_LIMITS.maxWaitMs}).`);
const maxOutputBytes = z.number().int().min(1).max(DEFAULT_LIMITS.maxOutputBytes).optional().describe(`Output bound in bytes (default ${DEFAULT_LIMITS.defaultOutputBytes}, max ${DEFAULT_LIMITS.maxOutputBytes}).`);

export const toolArgs = {
  terminal_list: z.object({}).strict(),
  terminal_open: z
    .object({
      // The person reads it on tabs and approval cards: nothing that reorders or hides how it reads.
      title: z
        .string()
        .trim()
        .min(1)
        .max(120)
        .refine((text) => findRefusedControl(text) === null && !/[\t\n\r\u00ad\u200b-\u200d\u2028\u2029\u2060\ufeff]/u.test(text), 'A title holds no control, bidirectional or invisible characters.')
        .describe('Tab title the person sees.'),
      shell: z.string().min(1).max(4096).optional().describe('bash, zsh, sh, pwsh, or a path (default: bash where available).'),
      cwd: z.string().min(1).max(4096).optional().describe("Working directory (default: the agent's project directory)."),
      env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(32768)).optional().describe('Extra environment variables.'),
      cols: z.number().int().min(20).max(DEFAULT_LIMITS.maxCols).optional(),
      rows: z.number().int().min(5).max(DEFAULT_LIMITS.maxRows).optional(),
    })
    .strict(),
  terminal_send: z
    .object({
      id,
      text: z.string().optional().describe('A command line at the prompt, or input to a waiting program.'),
      keys: z.array(z.string().min(1).max(16)).max(64).optional().describe('Named keys (Enter, Tab, Escape, Up, C-c, ...) or single printable characters.'),
      submit: z.boolean().optional().describe('Press Enter after text (default true for text).'),
      input: z.boolean().optional().describe('Type into a running program that is not waiting for input.'),
      waitMs,
      maxOutputBytes,
    })
    .strict(),
  terminal_wait: z.object({ id, since: z.string().max(64).optional().describe('A cursor from an earlier result.'), waitMs, maxOutputBytes }).strict(),
  terminal_read: z
    .object({
      id,
      since: z.string().max(64).optional(),
      offset: z.number().int().min(0).optional().describe('Lines back from the newest.'),
      count: z.number().int().min(1).max(10_000).optional(),
      maxBytes: z.number().int().min(1).max(DEFAULT_LIMITS.maxOutputBytes).optional(),
    })
    .strict(),
  terminal_signal: z.object({ id, signal: z.enum(SIGNALS) }).strict(),
  terminal_handoff: z.object({ id, message: z.string().trim().min(1).max(2000).describe('What you need the person to do.'), waitMs }).strict(),
  terminal_close: z.object({ id }).strict(),
} as const;

export type ToolName = keyof typeof toolArgs;
export type ToolArgs<K extends ToolName> = z.output<(typeof toolArgs)[K]>;

export const toolNames = Object.keys(toolArgs) as ToolName[];

export function isToolName(name: string): name is ToolName {
  return Object.prototype.hasOwnProperty.call(toolArgs, name);
}

const descriptions: Record<ToolName, string> = {
  terminal_list: "Lists your terminals, your disconnected predecessors' terminals, and terminals the person shared.",
  terminal_open: 'Opens a terminal tab the person can see, and returns once its shell shows a verified prompt.',
  terminal_send:
    'Runs a command at the prompt (settles when that command ends, with exit code and cwd), or types input to a waiting program. Status tells whether it is done, waiting_input (with evidence), still running, or the person took over.',
  terminal_wait: 'Waits for what a terminal does next after a cursor: the running command ending, a program waiting for input, or the person handing back control.',
  terminal_read: 'Reads the terminal screen and recent lines.',
  terminal_signal: 'Sends a signal to the foreground program (SIGINT interrupts it). SIGKILL of the shell itself is refused.',
  terminal_handoff: 'Asks the person to take over (a password, a login) and waits until they hand back.',
  terminal_close: 'Closes a terminal and its whole process tree.',
};

const errorShape = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/** The `tools/list` entries. Output schemas admit the error shape too. */
export function toolList(): Array<{ name: string; description: string; inputSchema: Record<string, unknown>; outputSchema: Record<string, unknown> }> {
  return toolNames.map((name) => ({
    name,
    description: descriptions[name],
    inputSchema: z.toJSONSchema(toolArgs[name], { io: 'input' }) as Record<string, unknown>,
    outputSchema: { type: 'object', description: 'The result object, or { error: { code, message } }.', anyOf: [{ type: 'object' }, z.toJSONSchema(errorShape)] },
  }));
}
