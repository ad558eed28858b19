/**
 * `terminal_open` `env` names that change only how output looks (locale, colour, width, time
 * zone): they pass without asking. Any other name makes the open wait for the person, since
 * variables such as HOME, PATH, GIT_*, LD_*, BASH_ENV, PYTHONPATH or INPUTRC can turn a later
 * allowed command into code execution.
 */
const harmlessNames = new Set(['LANG', 'LANGUAGE', 'LC_ALL', 'COLORTERM', 'NO_COLOR', 'FORCE_COLOR', 'CLICOLOR', 'CLICOLOR_FORCE', 'TZ', 'COLUMNS', 'LINES']);

/** `LC_CTYPE`, `LC_TIME`, ... (the locale categories). */
const localeCategory = /^LC_[A-Z]+$/;

/** A value without a path: glibc loads a locale or zone file from a value that has one. */
const plainValue = /^[A-Za-z0-9_.@,+-]{0,64}$/;
const zoneValue = /^[A-Za-z0-9_+-]{1,32}(\/[A-Za-z0-9_+-]{1,32}){0,2}$/;

export function isHarmlessEnv(name: string, value: string): boolean {
  if (name === 'TZ') return zoneValue.test(value);
  return (harmlessNames.has(name) || localeCategory.test(name)) && plainValue.test(value);
}

/** The names in `env` that need the person's approval, in the order given. */
export function envNeedingApproval(env: Record<string, string> | undefined): string[] {
  return Object.entries(env ?? {})
    .filter(([name, value]) => !isHarmlessEnv(name, value))
    .map(([name]) => name);
}
