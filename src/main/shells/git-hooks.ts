/**
 * What a repository's (or the person's) git configuration could make an allowed, read-only
 * git command run in an agent terminal, switched off through git's command-scope
 * configuration (`GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`), which overrides every config file;
 * see git-config(1), ENVIRONMENT. Checked against git 2.39 in tests/integration/agent-hardening.test.ts.
 *
 * - `core.fsmonitor=false`: `git status`/`diff` would run the configured hook command.
 * - `core.pager=cat` (and `GIT_PAGER=cat`, which beats `pager.<cmd>` strings too).
 * - `log.showSignature=false`: `git log`/`show` would run `gpg.program` to verify signatures.
 * Not switchable by any setting (the judge makes such repositories' git lines ask instead):
 * `diff.external` (an empty value makes every `git diff` fail with "cannot run"), textconv and
 * `diff.<driver>.command` chosen by attributes, and `filter.<driver>.*`.
 */
export const gitHookSettings: ReadonlyArray<readonly [key: string, value: string]> = [
  ['core.fsmonitor', 'false'],
  ['core.pager', 'cat'],
  ['log.showSignature', 'false'],
];

export const gitHookEnv: Readonly<Record<string, string>> = Object.fromEntries([
  ['GIT_CONFIG_COUNT', String(gitHookSettings.length)],
  ...gitHookSettings.flatMap(([key, value], i) => [
    [`GIT_CONFIG_KEY_${i}`, key],
    [`GIT_CONFIG_VALUE_${i}`, value],
  ]),
]);

/**
 * Removed from agent terminals (and again after the person's startup files): `git -c`'s own
 * variable is read after `GIT_CONFIG_COUNT` and would override it; an external diff program.
 */
export const gitHookUnset = ['GIT_CONFIG_PARAMETERS', 'GIT_EXTERNAL_DIFF'] as const;
