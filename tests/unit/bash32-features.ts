/**
 * Text checks for bash features newer than 3.2 (macOS's /bin/bash). Each names where bash's
 * NEWS file (Debian: /usr/share/doc/bash/NEWS.gz) says the feature arrived. Comments are
 * dropped first; each rule is tried on a sample in bash32-features.test.ts, so it can fail.
 */
export const bash32Rules: Array<{ feature: string; since: string; pattern: RegExp; sample: string }> = [
  { feature: 'PS0', since: '4.4 (NEWS 4.4 jj)', pattern: /\bPS0\b/, sample: 'PS0=x' },
  { feature: 'local -', since: '4.4 (NEWS 4.4 s)', pattern: /\blocal\s+(?:[\w=]+\s+)*-(?:\s|$)/m, sample: 'local - IFS' },
  { feature: '${var@op}', since: '4.4 (NEWS 4.4, parameter transformation)', pattern: /\$\{[#!]?\w+(?:\[[^\]]*\])?@[QEPAaKk]\}/, sample: 'echo ${x@Q}' },
  { feature: 'associative arrays', since: '4.0 (NEWS 4.0 ii)', pattern: /\b(?:declare|typeset|local)\s+(?:-\w*\s+)*-\w*A/, sample: 'declare -A m' },
  { feature: 'BASH_ALIASES', since: '4.0 (an associative array, NEWS 4.0 ii)', pattern: /\bBASH_ALIASES\b/, sample: '${!BASH_ALIASES[*]}' },
  { feature: 'BASH_CMDS', since: '4.0 (an associative array, NEWS 4.0 ii)', pattern: /\bBASH_CMDS\b/, sample: '${BASH_CMDS[ls]}' },
  { feature: 'case modification', since: '4.0 (NEWS 4.0 hh)', pattern: /\$\{[!#]?\w+(?:\[[^\]]*\])?(?:\^\^?|,,?)/, sample: 'case "${v^^}" in' },
  {
    feature: 'declare -l/-u/-n/-g',
    since: '4.0 (NEWS 4.0 jj), 4.2 (NEWS 4.2 e), 4.3 (namerefs)',
    pattern: /\b(?:declare|typeset|local)\s+(?:-\w*\s+)*-\w*[lugnI]\b/,
    sample: 'declare -g x',
  },
  { feature: 'mapfile/readarray', since: '4.0 (NEWS 4.0 u)', pattern: /\b(?:mapfile|readarray)\b/, sample: 'mapfile -t a' },
  { feature: '|&', since: '4.0 (NEWS 4.0 dd)', pattern: /\|&/, sample: 'a |& b' },
  { feature: '&>>', since: '4.0 (NEWS 4.0 cc)', pattern: /&>>/, sample: 'a &>> f' },
  { feature: ';& and ;;&', since: '4.0 (NEWS 4.0 ee, ff)', pattern: /;;&|[^;];&/, sample: 'x) a ;;& y) b;;' },
  { feature: 'coproc', since: '4.0 (NEWS 4.0 kk)', pattern: /\bcoproc\b/, sample: 'coproc x' },
  { feature: 'BASHPID', since: '4.0 (NEWS 4.0 c)', pattern: /\bBASHPID\b/, sample: 'echo $BASHPID' },
  {
    feature: 'globstar, autocd, checkjobs',
    since: '4.0 (NEWS 4.0 w, d, e)',
    pattern:
      /\b(?:globstar|autocd|checkjobs|lastpipe|direxpand|inherit_errexit|globasciiranges|localvar_inherit|assoc_expand_once|patsub_replacement|noexpand_translation|varredir_close)\b/,
    sample: 'shopt -s lastpipe',
  },
  { feature: 'read -t with a fraction', since: '4.0 (NEWS 4.0 y)', pattern: /\bread\b[^\n;|]*-t\s*\d*\.\d/, sample: 'read -t 0.1 x' },
  { feature: '{var}> fd allocation', since: '4.1 (NEWS 4.1)', pattern: /\{\w+\}[<>]/, sample: 'exec {fd}>f' },
  { feature: 'printf -v', since: '3.1 (NEWS 3.1 q), arrays 4.1 (NEWS 4.1 e)', pattern: /\bprintf\s+-v\b/, sample: 'printf -v x %s y' },
  { feature: 'negative subscripts or lengths', since: '4.2/4.3 (NEWS 4.3 h)', pattern: /\[\s*-\d+\s*\]|\$\{\w+:[^}:]*:\s*-\d/, sample: 'echo ${a[-1]}' },
  { feature: 'wait -n', since: '4.3', pattern: /\bwait\s+-\w*n/, sample: 'wait -n' },
  {
    feature: 'PROMPT_COMMAND as an array',
    since: '5.1 (NEWS 5.1 ee)',
    pattern: /\bPROMPT_COMMAND(?:\[|\+?=\()|\$\{PROMPT_COMMAND\[/,
    sample: 'PROMPT_COMMAND=(f)',
  },
  {
    feature: 'EPOCHREALTIME/EPOCHSECONDS/SRANDOM',
    since: '5.0 (NEWS 5.0 c), 5.1',
    pattern: /\b(?:EPOCHREALTIME|EPOCHSECONDS|SRANDOM)\b/,
    sample: 'echo $EPOCHREALTIME',
  },
  { feature: 'READLINE_LINE', since: '4.0 (NEWS 4.0 bb)', pattern: /\bREADLINE_(?:LINE|POINT|MARK)\b/, sample: 'echo $READLINE_LINE' },
  {
    feature: 'bind -x for Enter / enable-bracketed-paste',
    since: '4.4 (CHANGES 4.4-alpha, readline b)',
    pattern: /enable-bracketed-paste/,
    sample: "bind 'set enable-bracketed-paste on'",
  },
  { feature: 'quoted regex in [[ =~ ]]', since: 'differs 3.1/3.2 (NEWS 3.2 f): a variable only', pattern: /=~\s*(?!\$\w+\s*\]\])\S/, sample: '[[ $x =~ ^a ]]' },
];

/** The rules a script breaks, with the line; comments and blank lines are skipped. */
export function newerThanBash32(text: string): Array<{ feature: string; line: string }> {
  const hits: Array<{ feature: string; line: string }> = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/(^|\s)#.*$/, '$1').trimEnd();
    if (!line.trim()) continue;
    for (const rule of bash32Rules) if (rule.pattern.test(line)) hits.push({ feature: rule.feature, line: line.trim() });
  }
  return hits;
}
