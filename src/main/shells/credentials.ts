/**
 * Credential variables kept out of agent terminals. The list is deliberately precise: names
 * that end in a credential word, plus a few well-known exact names. `TOKENIZERS_PARALLELISM`
 * and friends do not match because only whole `_WORD` suffixes count. `SSH_AUTH_SOCK` stays:
 * it is a socket path the agent needs for git over ssh, not a secret.
 */
export const credentialSuffixes = [
  '_TOKEN',
  '_SECRET',
  '_SECRET_KEY',
  '_SECRET_ACCESS_KEY',
  '_CLIENT_SECRET',
  '_PASSWORD',
  '_PASSWD',
  '_API_KEY',
  '_APIKEY',
  '_PRIVATE_KEY',
  '_ACCESS_KEY',
  '_AUTH_TOKEN',
] as const;

export const credentialNames = [
  'TOKEN',
  'SECRET',
  'PASSWORD',
  'API_KEY',
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
] as const;

export function isCredentialName(name: string): boolean {
  const upper = name.toUpperCase();
  if ((credentialNames as readonly string[]).includes(upper)) return true;
  return credentialSuffixes.some((suffix) => upper.endsWith(suffix));
}

export function scrubCredentials(env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (!isCredentialName(name)) out[name] = value;
  return out;
}

/** Glob patterns (upper case) for shells' `case` statements: the same list, rendered. */
export function credentialGlobs(): string[] {
  return [...credentialNames, ...credentialSuffixes.map((suffix) => `*${suffix}`)];
}
