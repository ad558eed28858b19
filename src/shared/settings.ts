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
};

export function resolveAppearance(theme: ThemeChoice, systemDark: boolean): Appearance {
  if (theme === 'system') return systemDark ? 'dark' : 'light';
  return theme;
}
