/**
 * What an agent has put on a shell's line, so that the judge sees the line the shell will run
 * (issue 23). A shell runs its line editor's whole buffer: text typed without submit, the
 * lines a continuation prompt holds, and what the next send adds. Judging each send alone let
 * two allow-listed halves run as one line that neither was. Here a send at the shell's line is
 * planned as the whole line: the text typed before is typed again after the line is emptied
 * (`clearLine`), so the shell holds exactly what was judged.
 */
import type { TerminalPort } from '../../host/terminal-port.js';
import { dialectByName } from '../../shells/resolve.js';

export interface ShellLine {
  /** Text the agent typed on the current line without submitting it. */
  typed: string;
  /** The earlier lines a continuation prompt holds, each with its newline; null when Tandem did not type them. */
  held: string | null;
  /** Named keys edited the line (Tab, Up, Ctrl+R...): what it holds now is not known. */
  keyed: boolean;
  /** Text typed without submit to a program that was not reading: whoever reads next gets it with what follows. */
  typeahead: string;
  /** Counts changes: a plan made before a wait is typed only if nothing changed meanwhile. */
  version: number;
}

const lines = new WeakMap<TerminalPort, ShellLine>();

export function shellLineOf(terminal: TerminalPort): ShellLine {
  let line = lines.get(terminal);
  if (!line) {
    const fresh: ShellLine = { typed: '', held: null, keyed: false, typeahead: '', version: 0 };
    line = fresh;
    lines.set(terminal, fresh);
    // The person's turn may leave anything on the line: what Tandem typed no longer describes it.
    terminal.onControl((controller) => {
      if (controller === 'user') resetLine(fresh);
    });
  }
  return line;
}

/** Nothing Tandem typed describes the line any more (the person's turn, an interrupt). */
export function resetLine(line: ShellLine): void {
  Object.assign(line, { typed: '', held: null, keyed: false, typeahead: '', version: line.version + 1 });
}

/** Keys that submit the line as it stands, and nothing else. */
const submitKeys: readonly string[] = ['Enter', 'C-j', 'C-m'];

export type LineReader = 'prompt' | 'continuation' | 'program';

export interface SendArgs {
  text?: string;
  keys?: string[];
  submit?: boolean;
}

export interface SendPlan {
  /** The line judged: everything the shell will run with this send, keys aside. */
  line: string;
  /** The line with the named keys after it, as the person sees it. */
  shown: string;
  /** Named keys that edit the line are part of it (they ask unless the policy is `always`). */
  hasKeys: boolean;
  /** Typed without submit: the line is judged when the send that submits it arrives (the deny list applies now). */
  deferred: boolean;
  /** Asks whatever the judge says, and why. */
  mustAsk: string | null;
  /** What is written. */
  text: string | undefined;
  keys: string[] | undefined;
  submit: boolean | undefined;
  clearLine: boolean;
  /** Updates the line's record once this plan has been typed. */
  typedNow(line: ShellLine): void;
}

function keyNames(keys: readonly string[]): string {
  return keys.map((key) => (key.length === 1 ? key : `<${key}>`)).join(' ');
}

/**
 * The send as the shell will take it. At the shell's line (its prompt or a continuation
 * prompt) the judged line is the earlier lines + the unsubmitted text + this send; input to a
 * program that holds the terminal stays its own line, except typeahead to a program that is
 * not reading, which is judged with what submits it.
 */
export function planSend(line: ShellLine, reader: LineReader, programReading: boolean, dialect: string | null, args: SendArgs, drainsUnread = false): SendPlan {
  const plan = planOf(line, reader, programReading, dialect, args, drainsUnread);
  const update = plan.typedNow;
  return {
    ...plan,
    typedNow(l) {
      update(l);
      l.version++;
    },
  };
}

function planOf(line: ShellLine, reader: LineReader, programReading: boolean, dialect: string | null, args: SendArgs, drainsUnread: boolean): SendPlan {
  const text = args.text ?? '';
  const keys = args.keys ?? [];
  const submit = args.submit ?? (args.text !== undefined && keys.length === 0);
  const soleSubmitKey = keys.length === 1 && submitKeys.includes(keys[0]!) && !submit;
  const submits = (submit && keys.length === 0) || soleSubmitKey;
  const asTyped = { text: args.text, keys: args.keys, submit: args.submit };
  const view = (prefix: string) => ({ line: prefix + text, shown: [prefix + text, keyNames(keys)].filter(Boolean).join(' ').trim() });

  if (reader === 'program') {
    // A program that is not reading leaves the text to whoever reads next, the shell included.
    const prefix = programReading ? '' : line.typeahead;
    const editsOrSubmits = submit || keys.length > 0;
    return {
      ...view(prefix),
      hasKeys: keys.length > 0,
      deferred: !programReading && !editsOrSubmits,
      // A program may read part of what is sent (`head -c 5`) and leave the rest, a whole line,
      // to the shell: where nothing empties it at the prompt, that line would run unjudged.
      mustAsk: drainsUnread ? null : `input to a program here can reach ${dialect ?? 'the shell'}'s line unread, where nothing empties it`,
      ...asTyped,
      clearLine: false,
      typedNow(l) {
        l.typeahead = programReading ? '' : editsOrSubmits ? '' : l.typeahead + text.replace(/[\r\n]+$/, '');
      },
    };
  }

  const clear = dialectByName(dialect)?.lineClear(process.platform) ?? null;
  const held = reader === 'continuation' ? line.held : '';
  const prefix = (held ?? '') + line.typed;
  // Earlier lines the shell holds that are not retyped after the line is emptied.
  const kept = reader === 'continuation' && !clear?.clearsHeld ? (held ?? '') : '';
  const retyped = prefix.slice(kept.length);
  // After named keys the line is not known: text starts it afresh (the line is emptied), but a
  // bare submit key submits whatever the keys made of it, so it asks.
  const unknown =
    held === null
      ? 'it completes an earlier line that Tandem did not type'
      : line.keyed && text === '' && soleSubmitKey
        ? 'named keys changed this line; it is submitted as the shell holds it'
        : null;

  if (keys.length === 0 && !submit) {
    // Typed, not run: judged with what completes it. A newline could submit in a shell without
    // bracketed paste, so a multi-line part is judged now, as a line of its own: in all that is
    // typed, as earlier text is typed again with this (black-box round 16). Trailing line
    // ends are not typed (send-payload.ts), so the line does not keep them either.
    const typed = text.replace(/[\r\n]+$/, '');
    // What goes to the terminal: the earlier text again after the line is emptied, or this alone
    // (the lines a continuation holds are the shell's, not typed again).
    const multiline = /[\r\n]/.test(unknown || !clear ? typed : retyped + typed);
    if (unknown || !clear) {
      return {
        ...view(prefix),
        hasKeys: false,
        deferred: !multiline,
        mustAsk: null,
        ...asTyped,
        clearLine: false,
        typedNow(l) {
          l.typed += typed;
        },
      };
    }
    return {
      ...view(prefix),
      hasKeys: false,
      deferred: !multiline,
      mustAsk: null,
      text: retyped + typed,
      keys: undefined,
      submit: false,
      clearLine: true,
      typedNow(l) {
        l.typed += typed;
      },
    };
  }

  const afterSubmit = (judged: string) => (l: ShellLine) => {
    // If the shell continues the line, it holds all of it; at the next prompt this is dropped.
    l.held = unknown ? null : `${judged}\n`;
    l.typed = '';
    l.keyed = false;
    l.typeahead = '';
  };

  if (submits) {
    const judged = prefix + text;
    if (unknown || !clear) {
      return { ...view(prefix), hasKeys: false, deferred: false, mustAsk: unknown, ...asTyped, clearLine: false, typedNow: afterSubmit(judged) };
    }
    const whole = retyped + text;
    return {
      ...view(prefix),
      hasKeys: false,
      deferred: false,
      mustAsk: null,
      // An empty line is submitted by its key: there is no text to type.
      text: whole === '' ? undefined : whole,
      keys: whole === '' ? ['Enter'] : undefined,
      submit: whole === '' ? undefined : true,
      clearLine: true,
      typedNow: afterSubmit(judged),
    };
  }

  // Keys that edit, recall or submit in ways Tandem cannot follow: they ask (judge `hasKeys`),
  // and what the line holds afterwards is not known.
  return {
    ...view(prefix),
    hasKeys: true,
    deferred: false,
    mustAsk: null,
    ...asTyped,
    clearLine: false,
    typedNow(l) {
      l.typed = '';
      l.held = null;
      l.keyed = true;
      l.typeahead = '';
    },
  };
}

/** At a prompt no continuation holds earlier lines. */
export function atFreshPrompt(line: ShellLine, reader: LineReader): void {
  if (reader === 'prompt' && line.held !== null) {
    line.held = null;
    line.version++;
  }
}

/** After the person's edit was typed: the line holds it (unsubmitted) or nothing known. */
export function typedEdit(line: ShellLine, edit: string, submitted: boolean): void {
  Object.assign(line, { typed: submitted ? '' : edit, held: null, keyed: false, typeahead: '', version: line.version + 1 });
}

/** After a send under `always`, which is typed as sent: the line is known again only once submitted. */
export function typedUnjudged(line: ShellLine, reader: LineReader, args: SendArgs): void {
  const submits = (args.submit ?? (args.text !== undefined && !args.keys?.length)) && !args.keys?.length;
  if (reader === 'program') Object.assign(line, { typeahead: '', version: line.version + 1 });
  else Object.assign(line, { typed: '', held: null, keyed: !submits, typeahead: '', version: line.version + 1 });
}
