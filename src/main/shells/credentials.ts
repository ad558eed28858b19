/**
 * The second layer: what an agent terminal inherits from Tandem is an allow list (env.ts); this
 * list scrubs, after the person's startup files ran, the credentials those files exported, by
 * name and by the shape of the value. Names that end in a credential word, plus a few
 * well-known exact names; `TOKENIZERS_PARALLELISM` and friends do not match because only whole
 * `_WORD` suffixes count. `SSH_AUTH_SOCK` is not inherited unless the person allows it; when
 * they do, this scrub keeps it (it is a socket path, and the sandbox hides the socket).
 */
export const credentialSuffixes = [
  '_TOKEN',
  '_SECRET',
  '_SECRET_KEY',
  '_SECRET_ACCESS_KEY',
  '_CLIENT_SECRET',
  '_PASSWORD',
  '_PASSWD',
  '_PWD',
  '_API_KEY',
  '_APIKEY',
  '_PRIVATE_KEY',
  '_ACCESS_KEY',
  '_AUTH_TOKEN',
  '_AUTH',
  '_PASSPHRASE',
  '_CREDS',
  '_KEY',
  '_PAT',
  '_DSN',
  '_CREDENTIALS',
  '_WEBHOOK',
  '_WEBHOOK_URL',
  '_CONNECTION_STRING',
] as const;

export const credentialNames = [
  'TOKEN',
  'SECRET',
  'PASSWORD',
  'API_KEY',
  'AUTH',
  'PASSPHRASE',
  'CREDENTIALS',
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'GITLAB_TOKEN',
  'NPM_TOKEN',
  'TANDEM_TOKEN',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'ANTHROPIC_API_KEY',
  'OPENAI_API_KEY',
  'GEMINI_API_KEY',
  'GOOGLE_API_KEY',
  'HF_TOKEN',
  'DOCKER_PASSWORD',
  'PGPASSWORD',
  'MYSQL_PWD',
  'DATABASE_URL',
] as const;

/** Names that look like credentials but are capabilities the agent may use (see above). */
export const keptNames = ['SSH_AUTH_SOCK'] as const;

/**
 * Values that are credentials whatever the variable is called, as glob patterns (the shells
 * re-apply the scrub with `case`, PowerShell with the same patterns as a regex): a URL with a
 * `user:password@` part (`postgres://u:p@h/db`; any value with `://`, then `:`, then `@`), and
 * webhook URLs that are their own secret (Slack, Discord, Microsoft Teams).
 */
export const credentialValueGlobs = [
  '*://*:*@*',
  '*hooks.slack.com/*',
  '*discord.com/api/webhooks/*',
  '*discordapp.com/api/webhooks/*',
  '*.webhook.office.com/*',
] as const;

/** A glob of `*` and literal characters as an anchored, case-insensitive regex. */
export function globToRegex(glob: string): string {
  return `^${glob.replace(/[.*+?^${}()|[\]\\]/g, (c) => (c === '*' ? '.*' : `\\${c}`))}$`;
}

const valueShapes = credentialValueGlobs.map((glob) => new RegExp(globToRegex(glob), 's'));

export function isCredentialName(name: string): boolean {
  const upper = name.toUpperCase();
  if ((keptNames as readonly string[]).includes(upper)) return false;
  if ((credentialNames as readonly string[]).includes(upper)) return true;
  return credentialSuffixes.some((suffix) => upper.endsWith(suffix));
}

export function isCredentialValue(value: string): boolean {
  return valueShapes.some((shape) => shape.test(value));
}

export function isCredential(name: string, value: string): boolean {
  return !(keptNames as readonly string[]).includes(name.toUpperCase()) && (isCredentialName(name) || isCredentialValue(value));
}

export function scrubCredentials(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (!isCredential(name, value)) out[name] = value;
  return out;
}

/** Glob patterns (upper case) for shells' `case` statements on names: the same list, rendered. */
export function credentialGlobs(): string[] {
  return [...credentialNames, ...credentialSuffixes.map((suffix) => `*${suffix}`)];
}
