/**
 * The MCP tools of the agent API contract (agent-api.md), in one table: each tool's name, its
 * argument schema (validated in the handler so a malformed call gets `invalid_argument` naming
 * the field), the description listed to clients, and `run`, what it asks of the agent layer.
 * A new tool is one entry here (plus its `ToolService` member and AgentService method, if it
 * needs a new one). The stdio bridge lists the same table without a host (`toolList`).
 */
import { z } from 'zod';
import { describeControl, findRefusedControl } from '../../../shared/control-chars.js';
import { DEFAULT_LIMITS } from '../../../shared/limits.js';
import { SIGNALS } from '../../../shared/types.js';

/** What a handler returns: the result object (mcp-server.ts `toolResult` sends it as text and structuredContent). */
export type ToolOutput = object | Promise<object>;

/**
 * What the tools ask of the agent layer. AgentService (service.ts) is one: tsc checks it where
 * the transports hand it to `runTool` (mcp-http.ts, mcp-socket.ts). Declared here, not imported,
 * because service.ts types its methods by this table's `ToolArgs`: importing it back would be an
 * import circle. The connection is opaque to the tools (`C`): they hand it on.
 */
export interface ToolService<C> {
  /** While a call waits on a terminal, the UI shows the agent watching it (`agentListening`). */
  listening: <T>(connection: C, id: string, run: () => Promise<T>) => Promise<T>;
  list: (connection: C) => object;
  open: (connection: C, args: ToolArgs<'terminal_open'>, signal?: AbortSignal) => Promise<object>;
  send: (connection: C, args: ToolArgs<'terminal_send'>, signal?: AbortSignal) => Promise<object>;
  wait: (connection: C, args: ToolArgs<'terminal_wait'>, signal?: AbortSignal) => Promise<object>;
  read: (connection: C, args: ToolArgs<'terminal_read'>) => Promise<object>;
  signal: (connection: C, args: ToolArgs<'terminal_signal'>, signal?: AbortSignal) => Promise<object>;
  handoff: (connection: C, args: ToolArgs<'terminal_handoff'>, signal?: AbortSignal) => Promise<object>;
  close: (connection: C, args: ToolArgs<'terminal_close'>) => Promise<object>;
}

/** One tool: the arguments it takes (`T`, parsed), what clients are told, and what it does. */
export interface ToolDef<T> {
  readonly args: z.ZodType<T>;
  readonly description: string;
  /** Called with the parsed arguments; `signal` aborts when the client cancels the call. */
  readonly run: <C>(service: ToolService<C>, connection: C, args: T, signal: AbortSignal | undefined) => ToolOutput;
}

/**
 * Gives `run` its own argument type, inferred from `args`. Annotate `run`'s return as
 * `ToolOutput`: `ToolService` is typed by this table, so inferring it from a call of the service
 * makes the table's type circular (tsc: "'definitions' implicitly has type 'any'", "'ToolArgs'
 * circularly references itself").
 */
function tool<A extends z.ZodType>(def: {
  args: A;
  description: string;
  run: <C>(service: ToolService<C>, connection: C, args: z.output<A>, signal: AbortSignal | undefined) => ToolOutput;
}) {
  return def;
}

const id = z.string().min(1).max(64).describe('Terminal id from terminal_open or terminal_list.');
const waitMs = z
  .number()
  .int()
  .min(0)
  .max(DEFAULT_LIMITS.maxWaitMs)
  .optional()
  .describe(`How long the call may wait in ms (default ${DEFAULT_LIMITS.defaultWaitMs}, max ${DEFAULT_LIMITS.maxWaitMs}).`);
const maxOutputBytes = z
  .number()
  .int()
  .min(1)
  .max(DEFAULT_LIMITS.maxOutputBytes)
  .optional()
  .describe(`Output bound in bytes (default ${DEFAULT_LIMITS.defaultOutputBytes}, max ${DEFAULT_LIMITS.maxOutputBytes}).`);

/** The table, in the order `tools/list` gives it. */
const definitions = {
  terminal_list: tool({
    args: z.object({}).strict(),
    description: "Lists your terminals, your disconnected predecessors' terminals, and terminals the person shared.",
    run: (service, connection): ToolOutput => service.list(connection),
  }),
  terminal_open: tool({
    args: z
      .object({
        // The person reads it on tabs and approval cards: nothing that reorders or hides how it reads.
        title: z
          .string()
          .trim()
          .min(1)
          .max(120)
          .refine(
            (text) => findRefusedControl(text) === null && !/[\t\n\r\u00ad\u200b-\u200d\u2028\u2029\u2060\ufeff]/u.test(text),
            'A title holds no control, bidirectional or invisible characters.',
          )
          .describe('Tab title the person sees.'),
        shell: z.string().min(1).max(4096).optional().describe('bash, zsh, sh, pwsh, or a path (default: bash where available).'),
        cwd: z.string().min(1).max(4096).optional().describe("Working directory (default: the agent's project directory)."),
        env: z
          .record(
            z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/),
            z
              .string()
              .max(32768)
              .refine((value) => !value.includes('\0'), 'A variable holds no NUL character (no process environment can carry one).'),
          )
          .optional()
          .describe('Extra environment variables.'),
        cols: z.number().int().min(20).max(DEFAULT_LIMITS.maxCols).optional(),
        rows: z.number().int().min(5).max(DEFAULT_LIMITS.maxRows).optional(),
      })
      .strict(),
    description: 'Opens a terminal tab the person can see, and returns once its shell shows a verified prompt.',
    run: (service, connection, args, signal): ToolOutput => service.open(connection, args, signal),
  }),
  terminal_send: tool({
    args: z
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
    description:
      'Runs a command at the prompt (settles when that command ends, with exit code and cwd), or types input to a waiting program. Status tells whether it is done, waiting_input (with evidence), still running, or the person took over.',
    run: (service, connection, args, signal): ToolOutput => service.listening(connection, args.id, () => service.send(connection, args, signal)),
  }),
  terminal_wait: tool({
    args: z.object({ id, since: z.string().max(64).optional().describe('A cursor from an earlier result.'), waitMs, maxOutputBytes }).strict(),
    description:
      'Waits for what a terminal does next after a cursor: the running command ending, a program waiting for input, or the person handing back control.',
    run: (service, connection, args, signal): ToolOutput => service.listening(connection, args.id, () => service.wait(connection, args, signal)),
  }),
  terminal_read: tool({
    args: z
      .object({
        id,
        since: z.string().max(64).optional(),
        offset: z.number().int().min(0).optional().describe('Lines back from the newest.'),
        count: z.number().int().min(1).max(10_000).optional(),
        maxBytes: z.number().int().min(1).max(DEFAULT_LIMITS.maxOutputBytes).optional(),
      })
      .strict(),
    description: 'Reads the terminal screen and recent lines.',
    run: (service, connection, args): ToolOutput => service.read(connection, args),
  }),
  terminal_signal: tool({
    args: z.object({ id, signal: z.enum(SIGNALS) }).strict(),
    description: 'Sends a signal to the foreground program (SIGINT interrupts it). SIGKILL of the shell itself is refused.',
    run: (service, connection, args, signal): ToolOutput => service.signal(connection, args, signal),
  }),
  terminal_handoff: tool({
    args: z
      .object({
        id,
        // The person reads it on the handoff card and bar: nothing that reorders or hides how it reads.
        message: z
          .string()
          .trim()
          .min(1)
          .max(2000)
          .superRefine((text, ctx) => {
            const control = findRefusedControl(text);
            if (control)
              ctx.addIssue({
                code: 'custom',
                message: `A message holds no control or bidirectional characters: it has ${describeControl(control.char)} at position ${control.index}.`,
              });
          })
          .describe('What you need the person to do.'),
        waitMs,
      })
      .strict(),
    description: 'Asks the person to take over (a password, a login) and waits until they hand back.',
    run: (service, connection, args, signal): ToolOutput => service.listening(connection, args.id, () => service.handoff(connection, args, signal)),
  }),
  terminal_close: tool({
    args: z.object({ id }).strict(),
    description: 'Closes a terminal and its whole process tree.',
    run: (service, connection, args): ToolOutput => service.close(connection, args),
  }),
};

export type ToolName = keyof typeof definitions;
/** A tool's parsed arguments: what its AgentService method takes. */
export type ToolArgs<K extends ToolName> = z.output<(typeof definitions)[K]['args']>;

/** The table as the server runs it: `tools[name]` is a `ToolDef` of that tool's own arguments. */
export const tools: { readonly [K in ToolName]: ToolDef<ToolArgs<K>> } = definitions;

export const toolNames = Object.keys(tools) as ToolName[];

export function isToolName(name: string): name is ToolName {
  return Object.prototype.hasOwnProperty.call(tools, name);
}

const errorShape = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/** The `tools/list` entries. Output schemas admit the error shape too. */
export function toolList(): Array<{ name: string; description: string; inputSchema: Record<string, unknown>; outputSchema: Record<string, unknown> }> {
  return toolNames.map((name) => ({
    name,
    description: tools[name].description,
    inputSchema: z.toJSONSchema(tools[name].args, { io: 'input' }) as Record<string, unknown>,
    outputSchema: {
      type: 'object',
      description: 'The result object, or { error: { code, message } }.',
      anyOf: [{ type: 'object' }, z.toJSONSchema(errorShape)],
    },
  }));
}
