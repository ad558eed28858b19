/**
 * What an approval card tells the person beyond the command itself: which lines destroy data
 * or download and run code, why Tandem asks in plain words, and which allow entries the
 * person may add from the card. Pure, so tests/unit/approval-risk.test.ts covers it; the host's
 * judge (src/main/agent/judge) stays the one that decides what runs.
 */
import { argumentsKnown, runsItsArguments } from '../../../shared/runners';

export type RiskMark = 'destructive' | 'download-run';

export interface LineRisk {
  line: string;
  marks: RiskMark[];
}

/** Programs that run the next word as the command (`sudo rm -rf x` is rm). */
const wrappers = new Set([
  'sudo',
  'doas',
  'env',
  'command',
  'exec',
  'nohup',
  'time',
  'nice',
  'ionice',
  'xargs',
  'builtin',
  'timeout',
  'stdbuf',
  'taskset',
  'chrt',
  'setsid',
  'unbuffer',
  'flock',
  'watch',
]);

const shells = '(?:(?:sudo|doas|env|command|exec|nohup)\\s+(?:-\\S+\\s+)*)*(?:ba|z|da|k|fi)?sh|python3?|perl|ruby|node|pwsh|powershell';

/** `curl … | sh`, `wget -O- … | bash`, `bash <(curl …)`, `sh -c "$(curl …)"`, `iex (irm …)`, `irm … | iex`. */
const downloadRun: readonly RegExp[] = [
  new RegExp(`\\b(?:curl|wget|fetch|http|aria2c)\\b[^|]*\\|\\s*(?:${shells})\\b`, 'i'),
  new RegExp(`\\b(?:${shells})\\b[^\\n]*(?:<\\(|\\$\\(|\`)\\s*(?:curl|wget)\\b`, 'i'),
  /\b(?:iex|invoke-expression)\b[\s\S]*\b(?:irm|iwr|invoke-restmethod|invoke-webrequest|downloadstring|net\.webclient)\b/i,
  /\b(?:irm|iwr|invoke-restmethod|invoke-webrequest)\b[^|]*\|\s*(?:iex|invoke-expression)\b/i,
];

function words(segment: string): string[] {
  return (
    segment
      .trim()
      .split(/\s+/)
      // Quotes anywhere in a word join its parts for the shell (`r''m` is rm).
      .map((word) => word.replace(/['"]/g, ''))
      .filter(Boolean)
  );
}

/** The command words of one segment, wrappers and assignments skipped; the program as its last path part. */
function commandWords(segment: string): string[] {
  const all = words(segment);
  let start = 0;
  // A wrapper's options and their values (`nice -n 5`, `timeout 300`, `flock lockfile`) come before the program.
  let inWrapper = false;
  while (start < all.length) {
    const word = all[start]!;
    if (wrappers.has(word)) inWrapper = true;
    else if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) {
      // An assignment (`env A=1`, `A=1 cmd`).
    } else if (!(inWrapper && (word.startsWith('-') || /^\d+(\.\d+)?[smhd]?$/.test(word)))) break;
    start++;
  }
  const rest = all.slice(start);
  if (rest[0]) rest[0] = rest[0].split(/[\\/]/).at(-1)!.toLowerCase();
  return rest;
}

/** Short options, grouped or not (`-rf`), and long ones. */
function hasOption(args: readonly string[], short: string, long: readonly string[] = []): boolean {
  return args.some((arg) => (/^-[^-]/.test(arg) && arg.slice(1).includes(short)) || long.some((name) => arg === name || arg.startsWith(`${name}=`)));
}

function destructive(segment: string): boolean {
  const [program = '', ...args] = commandWords(segment);
  switch (program) {
    case 'rm':
    case 'remove-item':
    case 'rd':
    case 'rmdir':
      return program === 'rm'
        ? hasOption(args, 'r', ['--recursive']) || hasOption(args, 'R') || hasOption(args, 'f', ['--force'])
        : args.some((arg) => /^-(?:r|recurse|force)$/i.test(arg));
    case 'dd':
    case 'shred':
    case 'wipefs':
    case 'fdisk':
    case 'sfdisk':
    case 'parted':
    case 'truncate':
    case 'format':
    case 'format-volume':
    case 'clear-disk':
      return true;
    case 'chmod':
    case 'chown':
    case 'chgrp':
      return hasOption(args, 'R', ['--recursive']);
    case 'find':
      return args.includes('-delete') || args.some((arg) => /^-(exec|execdir|ok|okdir)$/.test(arg) && /\b(rm|shred|dd|truncate|wipefs|mkfs)\b/.test(segment));
    case 'git': {
      // The subcommand: past git's own options, and the values `-c`, `-C`, `--git-dir`... take.
      const takesValue = new Set(['-c', '-C', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--config-env']);
      const sub = args.find((arg, i) => !arg.startsWith('-') && !takesValue.has(args[i - 1] ?? ''));
      if (sub === 'reset') return args.includes('--hard') || args.includes('--merge') || args.includes('--keep');
      if (sub === 'clean') return hasOption(args, 'f', ['--force']);
      if (sub === 'push') return hasOption(args, 'f', ['--force', '--force-with-lease', '--mirror', '--delete']) || args.some((arg) => arg.startsWith('+'));
      if (sub === 'checkout' || sub === 'restore') return args.includes('.') || args.includes('--') || hasOption(args, 'f', ['--force']);
      if (sub === 'branch') return hasOption(args, 'D');
      if (sub === 'stash') return args.includes('drop') || args.includes('clear');
      return false;
    }
    default:
      return /^mkfs(\.|$)/.test(program);
  }
}

/** Splits at separators and pipes; `$(...)` and backticks count as their own commands. */
function segments(line: string): string[] {
  return line.split(/\|\||&&|[;|&]|\$\(|`|\(|\)/).filter((part) => part.trim());
}

/** Each line of the command with what it risks. */
export function lineRisks(command: string): LineRisk[] {
  return command.split('\n').map((line) => {
    const marks: RiskMark[] = [];
    if (segments(line).some(destructive)) marks.push('destructive');
    if (downloadRun.some((pattern) => pattern.test(line))) marks.push('download-run');
    return { line, marks };
  });
}

export const riskLabels: Record<RiskMark, { label: string; title: string }> = {
  destructive: { label: 'destroys data', title: 'This line deletes or overwrites files, history or disks; it cannot be undone' },
  'download-run': { label: 'downloads and runs', title: 'This line downloads code from the network and runs it at once, unseen' },
};

/**
 * Why the card asks, as a sentence a person reads (the judge's reasons are precise but written
 * for the log: "it has a pipeline", "the bash grammar found a syntax error").
 */
export function plainWhy(why: string | null, agent: string, kind: 'command' | 'open'): string | null {
  if (!why) return null;
  const match = (pattern: RegExp): RegExpExecArray | null => pattern.exec(why);
  let found: RegExpExecArray | null;
  if (why === 'this agent asks for every command') return `You chose to be asked about every command ${agent} runs.`;
  if (why === 'named keys can edit the line as it is typed')
    return 'It presses keys (arrows, Ctrl+U…) that can change the line while it is typed, so what runs cannot be read in advance.';
  if ((found = match(/^(.+) is not on the allow list$/))) return `Nothing on ${agent}'s allow list covers “${found[1]}” yet.`;
  if ((found = match(/^lines in (.+) always ask$/))) return `Tandem does not check command lines in ${found[1]}, so every line asks.`;
  if (why === 'the shell grammars could not be loaded') return 'Tandem could not load its command checker, so every line asks.';
  if (/^(it is not one simple command|it has |the (bash|PowerShell) grammar|its command name|the parser and the literal)/.test(why)) {
    return 'It is more than one plain command (a pipe, a redirection, a variable, quoting or several commands): only plain commands run without asking.';
  }
  if ((found = match(/^(\S+) \((\S+)\) can write files, run programs or read other configuration$/)))
    return `Its option ${found[1]} can write files, run programs or read other settings.`;
  if ((found = match(/^(\S+) is not among the options allowed for (.+)$/))) return `The allow entry for “${found[2]}” does not list the option ${found[1]}.`;
  if ((found = match(/^(.+) is allowed without operands only$/))) return `“${found[1]}” is allowed only without arguments.`;
  if ((found = match(/^git options before the subcommand/))) return 'Options before git’s subcommand can point git at another repository or configuration.';
  if ((found = match(/^(.+) is outside the terminal's workspace/))) return `It names ${found[1]}, which is outside the folder this terminal works in.`;
  if ((found = match(/^(.+) is in a protected location/))) return `It names ${found[1]}, a place that holds credentials or Tandem's own state.`;
  if (why === 'its file operands cannot be checked in this terminal' || why === 'the repository of this terminal is not known')
    return 'Tandem cannot tell which folder this terminal is in, so it cannot check the files the line names.';
  if (/^the repository's configuration sets |could not be read|cannot read|too many files|too large to check|layout could not be read/.test(why))
    return 'The repository’s git settings could make git run another program (or could not be checked).';
  if ((found = match(/^allowed, but (.+): it could run something else$/)))
    return `It is on the allow list, but ${found[1]!.replace(/ in this shell$/, '')} in this shell, so it could run something else.`;
  if (why === 'these variables can change what later commands run') return 'It sets environment variables that can change what every later command in it runs.';
  if (why.startsWith('its workspace would be the whole filesystem'))
    return 'It would open with the whole filesystem (/) as its workspace, writable inside the sandbox.';
  if (why.startsWith('its workspace would hold your home directory'))
    return 'It would open with your whole home folder as its workspace, writable inside the sandbox.';
  if ((found = match(/^its workspace is outside the agent's project \((.+)\)$/))) return `It would open outside the agent’s project (${found[1]}).`;
  if (kind === 'open') return `It asks before opening: ${why}.`;
  return `Tandem could not show that it is harmless: ${why}.`;
}

/** A word the allow entry syntax and the judge's literal-word rule read the same way. */
const plainWord = /^[A-Za-z0-9_%+=:,./-]+$/;

/** Programs whose first plain argument is a subcommand worth naming in an entry (`npm test`, `git commit`). */
// prettier-ignore
const withSubcommands = new Set([
  'git', 'npm', 'pnpm', 'yarn', 'bun', 'npx', 'cargo', 'go', 'docker', 'podman', 'kubectl', 'make', 'pip', 'pip3', 'poetry', 'uv', 'dotnet', 'gradle', 'mvn', 'brew', 'apt', 'gh', 'terraform', 'deno', 'rustup', 'conda',
]);

export interface AllowChoices {
  /**
   * "Always allow this command": the program (and its subcommand), any further arguments; only
   * for programs whose risky options the judge knows (`argumentsKnown`), null for any other: an
   * option nobody checked may run a command (`git rebase -x`, `make --eval`).
   */
  command: string | null;
  /** "…with these arguments": exactly this line, nothing added. */
  exact: string | null;
}

/**
 * The allow entries a card may offer for `command`, or null when no entry would let it run: the
 * judge asked for another reason than the list (a file outside the workspace, an alias, more
 * than one plain command, quoting, a variable), and an entry must never paper over those.
 */
export function allowChoices(command: string, why: string | null): AllowChoices | null {
  if (!why || !/ is not on the allow list$| is not among the options allowed for | is allowed without operands only$/.test(why)) return null;
  const line = command.replace(/[\r\n]+$/, '');
  if (line.includes('\n')) return null;
  const all = line
    .trim()
    .split(/[ \t]+/)
    .filter(Boolean);
  if (all.length === 0 || !all.every((word) => plainWord.test(word)) || all[0]!.includes('=')) return null;
  const [program, second] = all as [string, ...string[]];
  const head = withSubcommands.has(program) && second && !second.startsWith('-') ? `${program} ${second}` : program;
  const exactEntry = `${all.join(' ')} | options: | operands: none`;
  const exact = exactEntry.length <= 200 ? exactEntry : null;
  // Any further arguments only where the judge knows every option that could run or write (argumentsKnown).
  const known = argumentsKnown.has(head) && !runsItsArguments.has(program) && !runsItsArguments.has(head);
  // A line that is just its head needs no second, exact choice.
  const same = all.length === head.split(' ').length;
  // A runner alone (`bash`, `python3`) would start a shell or interpreter: no choice at all.
  if ((!known && !exact) || (same && !head.includes(' ') && runsItsArguments.has(program))) return null;
  return { command: known ? head : null, exact: known && same ? null : exact };
}
