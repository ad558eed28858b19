/**
 * The person's preferences, kept by the host (one file in the state directory) so every window
 * and browser tab shows the same terminal. Bounds are part of the schema: bad values are refused
 * with `invalid_argument`, never clamped silently.
 */
import { z } from 'zod';

export const fontSizeBounds = { min: 8, max: 32 } as const;
/** Lines of history the host keeps per new terminal. Beyond the 1,000 live lines they are kept as serialized text (a full 160-column line is about 200 bytes), so 50,000 is about 10 MB a terminal. */
export const scrollbackBounds = { min: 100, max: 50_000 } as const;
/** The terminal font when the person names none. */
export const defaultFontFamily = "'JetBrains Mono', 'Cascadia Mono', 'DejaVu Sans Mono', 'Liberation Mono', ui-monospace, Menlo, Consolas, monospace";

/** Names the person may add to what agent terminals inherit. */
export const agentEnvAllowBounds = { names: 64, nameChars: 128 } as const;

/** Recordings (src/main/record): one terminal's .cast, all of them together (MiB), and days a finished one is kept. */
export const recordingBounds = { maxMiB: { min: 1, max: 1024 }, totalMiB: { min: 10, max: 100_000 }, days: { min: 1, max: 3650 } } as const;

/** Hours a closed terminal's tab stays as a transcript (0: closed tabs go at once and none come back after a restart). */
export const transcriptKeepBounds = { min: 0, max: 24 * 90 } as const;

export const themeChoices = ['dark', 'light', 'system'] as const;
export type ThemeChoice = (typeof themeChoices)[number];
/** A theme as drawn: "system" resolved by the person's operating system or browser. */
export type Appearance = 'dark' | 'light';

/** Remote machine names, as `--machine NAME=…` takes them (src/main/remote/machine.ts keeps the same pattern). */
export const machineNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/;
export const machineNameRule = `the name must be 1-32 letters, digits, '.', '_' or '-' (not "local"), as in dev`;
export const machineDestinationRule =
  'the destination must be an ssh destination such as me@devbox or a Host of ~/.ssh/config (no spaces, not starting with -)';

/** One remote machine the person added (Settings' "Remote machines"), checked as `--machine NAME=DESTINATION` is. */
export const machineEntrySchema = z
  .object({
    name: z.string().refine((name) => machineNamePattern.test(name) && name !== 'local', machineNameRule),
    // One ssh argument, never an option: ssh would read `-oProxyCommand=…` as one.
    destination: z
      .string()
      .max(255)
      .refine((destination) => destination.length > 0 && !destination.startsWith('-') && !/\s/.test(destination), machineDestinationRule),
  })
  .strict();
export type MachineEntry = z.output<typeof machineEntrySchema>;
/** At most this many kept machines. */
export const maxMachines = 64;

export const settingsSchema = z
  .object({
    theme: z.enum(themeChoices),
    /** A CSS font-family list; control characters and CSS punctuation that could end the value are refused. */
    fontFamily: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .regex(/^[^\p{Cc};{}<>]+$/u, 'must be a font-family list without ; { } < > or control characters'),
    fontSize: z.number().int().min(fontSizeBounds.min).max(fontSizeBounds.max),
    /** Draw the font's ligatures (`=>`, `!=`) where the renderer can (renderer/src/terminal/ligatures.ts). */
    fontLigatures: z.boolean(),
    cursorStyle: z.enum(['block', 'bar', 'underline']),
    cursorBlink: z.boolean(),
    scrollback: z.number().int().min(scrollbackBounds.min).max(scrollbackBounds.max),
    copyOnSelect: z.boolean(),
    rightClick: z.enum(['menu', 'paste']),
    bell: z.enum(['none', 'visual', 'sound']),
    /** Typing into a terminal an agent drives takes control (else typing is held back). */
    typingTakesOver: z.boolean(),
    /** The sandbox a newly paired agent's terminals get (Windows: always off); each agent's own choice is in the agents panel. */
    newAgentSandbox: z.enum(['off', 'workspace-write', 'read-only']),
    /** Whether a newly paired agent's confined terminals reach the network. */
    newAgentNetwork: z.boolean(),
    /**
     * What opens a file path clicked in a terminal: a program and its arguments, split at
     * spaces ("double quotes" keep spaces), `{path}`, `{line}` and `{column}` replaced in each
     * word, run without a shell. Empty: the system's opener (no line).
     */
    editorCommand: z
      .string()
      .trim()
      .max(300)
      .regex(/^[^\p{Cc}]*$/u, 'must not hold control characters'),
    /** A program may set the clipboard with OSC 52 (it can never read it). */
    osc52Clipboard: z.boolean(),
    /** Inline images: sixel and iTerm2's protocol. */
    inlineImages: z.boolean(),
    /**
     * Variables of Tandem's own environment that agent terminals get beyond the fixed set
     * (PATH, HOME, LANG, ...): names only, no patterns, no values; the person's terminals get everything.
     */
    agentEnvAllow: z
      .array(
        z
          .string()
          .max(agentEnvAllowBounds.nameChars)
          .regex(/^[A-Za-z_][A-Za-z0-9_]*(?:\(x86\))?$/, 'must be variable names (letters, digits, _)'),
      )
      .max(agentEnvAllowBounds.names),
    /** Each new terminal is recorded (asciicast v3 and its timeline, docs/recordings.md). */
    recording: z.boolean(),
    /** Past this a terminal's recording stops keeping output (one marker says so); its timeline goes on. */
    recordingMaxMiB: z.number().int().min(recordingBounds.maxMiB.min).max(recordingBounds.maxMiB.max),
    /** All recordings together: the oldest finished ones go first. */
    recordingTotalMiB: z.number().int().min(recordingBounds.totalMiB.min).max(recordingBounds.totalMiB.max),
    /** A finished recording older than this many days goes. */
    recordingDays: z.number().int().min(recordingBounds.days.min).max(recordingBounds.days.max),
    /** How long a closed terminal's tab stays as a read-only transcript, and the last session's tabs after a restart. */
    transcriptKeepHours: z.number().int().min(transcriptKeepBounds.min).max(transcriptKeepBounds.max),
    /**
     * Remote machines kept across restarts (added in the app; `tandem serve --machine` ones are
     * given at each start and not kept). Changed by the addMachine and removeMachine operations.
     */
    machines: z
      .array(machineEntrySchema)
      .max(maxMachines)
      .refine((list) => new Set(list.map((m) => m.name)).size === list.length, 'each machine needs a name of its own'),
  })
  .strict();

export type Settings = z.output<typeof settingsSchema>;

/** A change: any subset of the settings, each field validated as above. */
export const settingsPatchSchema = settingsSchema.partial().strict();
export type SettingsPatch = z.output<typeof settingsPatchSchema>;

export const defaultSettings: Settings = {
  theme: 'dark',
  fontFamily: defaultFontFamily,
  fontSize: 14,
  fontLigatures: false,
  cursorStyle: 'block',
  cursorBlink: true,
  scrollback: 10_000,
  copyOnSelect: false,
  rightClick: 'menu',
  bell: 'visual',
  typingTakesOver: true,
  newAgentSandbox: 'workspace-write',
  newAgentNetwork: true,
  editorCommand: '',
  osc52Clipboard: false,
  inlineImages: false,
  agentEnvAllow: [],
  recording: true,
  recordingMaxMiB: 20,
  recordingTotalMiB: 500,
  recordingDays: 30,
  transcriptKeepHours: 72,
  machines: [],
};

/**
 * The stored `machines`, entry by entry: a malformed entry (hand-edited settings.json) is refused
 * with a sentence naming it and why, and every good one is kept (the first of a repeated name).
 */
export function storedMachines(raw: unknown): { machines: MachineEntry[]; refused: string[] } {
  if (raw === undefined) return { machines: [], refused: [] };
  if (!Array.isArray(raw))
    return { machines: [], refused: ['settings.json: "machines" is not a list of { "name", "destination" }; no saved machine is used.'] };
  const machines: MachineEntry[] = [];
  const refused: string[] = [];
  raw.forEach((entry: unknown, index) => {
    const label = `settings.json: machines[${index}] ${JSON.stringify(entry)?.slice(0, 120) ?? String(entry)}`;
    if (machines.length >= maxMachines) {
      refused.push(`${label} is refused: at most ${maxMachines} machines are kept.`);
      return;
    }
    const parsed = machineEntrySchema.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      refused.push(`${label} is refused: ${field}${issue?.message ?? 'not a { "name", "destination" } entry'}.`);
      return;
    }
    if (machines.some((m) => m.name === parsed.data.name)) {
      refused.push(`${label} is refused: another entry is already named ${parsed.data.name}.`);
      return;
    }
    machines.push(parsed.data);
  });
  return { machines, refused };
}

export function resolveAppearance(theme: ThemeChoice, systemDark: boolean): Appearance {
  if (theme === 'system') return systemDark ? 'dark' : 'light';
  return theme;
}
