import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TandemError } from '../../../shared/errors.js';
import { defaultPolicy, type PolicySettings } from '../judge/policy.js';

/** A paired agent as stored: never the token itself, only its hash. */
export interface AgentRecord {
  name: string;
  tokenHash: string;
  createdAt: string;
  settings: PolicySettings;
}

/** Who a presented token belongs to. `persistent` is false for Allow-once and trusted tokens. */
export interface AgentIdentity {
  name: string;
  tokenHash: string;
  persistent: boolean;
  settings: PolicySettings;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function newToken(): string {
  return `tdm_${randomBytes(32).toString('base64url')}`;
}

/**
 * Session tokens kept at once. Under --trust-local-agents every bridge start pairs anew, so a
 * host running for weeks would collect them; past this, the least recently used one is revoked
 * (its bridge, if it still runs, pairs again on its next call).
 */
export const maxEphemeralTokens = 256;

export const agentNamePattern = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/;

/**
 * A display name no one in `taken` holds: the claim itself, else `claim (2)`, `claim (3)`…
 * so a claim never shows under the name of an agent already paired or connected.
 */
export function distinctName(claim: string, taken: (name: string) => boolean): string {
  if (!taken(claim)) return claim;
  const base = claim.slice(0, 56);
  for (let n = 2; ; n++) if (!taken(`${base} (${n})`)) return `${base} (${n})`;
}

export function checkAgentName(name: string): string {
  // Spaces in a row read as one on a card (HTML collapses them): `my  agent` would pass for `my agent`.
  const trimmed = name.trim().replace(/ {2,}/g, ' ');
  if (!agentNamePattern.test(trimmed)) {
    throw new TandemError('invalid_argument', 'name must be 1 to 64 letters, digits, spaces, dots, dashes or underscores.');
  }
  return trimmed;
}

/**
 * Two names a person would read as one agent's: the same but for case (`Claude`, `claude`),
 * spaces in a row (black-box round 8), letters that look alike in a sans-serif face (`cIaude`,
 * `c1aude`, `rn` for `m`, `0` for `o`) or punctuation around and between words (`claude.`,
 * `claude_`, `my-agent`; round 9). Names are ASCII (agentNamePattern): nothing else to fold.
 */
export function sameAgentName(a: string, b: string): boolean {
  return nameSkeleton(a) === nameSkeleton(b);
}

function nameSkeleton(name: string): string {
  return name
    .replace(/[I1|]/g, 'l')
    .replace(/0/g, 'o')
    .toLowerCase()
    .replace(/rn/g, 'm')
    .replace(/vv/g, 'w')
    .replace(/[\s._-]+/g, ' ')
    .trim();
}

/**
 * Per-agent tokens, stored hashed in `<state>/agents.json` (0600). Session tokens (Allow once,
 * --trust-local-agents) live in memory only and die with the instance.
 */
export class TokenStore {
  private readonly path: string;
  private records = new Map<string, AgentRecord>();
  private readonly ephemeral = new Map<string, AgentIdentity & { id: string }>();
  private readonly revokeListeners = new Set<(identity: { name: string; tokenHash: string }) => void>();

  constructor(stateDir: string) {
    this.path = join(stateDir, 'agents.json');
    this.load();
  }

  private load(): void {
    try {
      const data = JSON.parse(readFileSync(this.path, 'utf8')) as { agents?: AgentRecord[] };
      for (const record of data.agents ?? []) this.records.set(record.name, { ...record, settings: { ...defaultPolicy, ...record.settings } });
    } catch {
      this.records = new Map();
    }
  }

  private save(): void {
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ agents: [...this.records.values()] }, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, this.path);
    chmodSync(this.path, 0o600);
  }

  /** The settings a new pairing starts with: the default policy, plus the person's default sandbox once the layer sets it. */
  newSettings: () => PolicySettings = () => defaultPolicy;

  /** Creates (or replaces) a paired agent and returns its token, shown to the person once. */
  pair(name: string, settings: PolicySettings = this.newSettings()): string {
    const checked = checkAgentName(name);
    const previous = this.records.get(checked);
    if (previous) this.emitRevoked(previous);
    const token = newToken();
    this.records.set(checked, { name: checked, tokenHash: hashToken(token), createdAt: new Date().toISOString(), settings });
    this.save();
    return token;
  }

  /**
   * A token valid until this instance exits or the person revokes it (Allow once, trusted local
   * agents). `name` is the display name, already made distinct by the caller (`distinctName`).
   */
  issueEphemeral(name: string, settings: PolicySettings = this.newSettings()): string {
    const token = newToken();
    const tokenHash = hashToken(token);
    this.ephemeral.set(tokenHash, { id: randomBytes(9).toString('base64url'), name, tokenHash, persistent: false, settings });
    for (const oldest of this.ephemeral.keys()) {
      if (this.ephemeral.size <= maxEphemeralTokens) break;
      this.revokeEphemeral(oldest);
    }
    return token;
  }

  /** Agents allowed once (or trusted) in this instance, for the agents panel. */
  listEphemeral(): Array<{ id: string; name: string; tokenHash: string }> {
    return [...this.ephemeral.values()].map(({ id, name, tokenHash }) => ({ id, name, tokenHash }));
  }

  revokeEphemeralById(id: string): void {
    const entry = [...this.ephemeral.values()].find((identity) => identity.id === id);
    if (!entry) throw new TandemError('not_found', 'That agent is no longer allowed; nothing to revoke.');
    this.revokeEphemeral(entry.tokenHash);
  }

  /** The token hash a paired agent's name stands for now, or null. */
  pairedKey(name: string): string | null {
    return this.records.get(name.trim())?.tokenHash ?? null;
  }

  identify(token: string): AgentIdentity | null {
    const tokenHash = hashToken(token);
    const ephemeral = this.ephemeral.get(tokenHash);
    if (ephemeral) {
      // Most recently used last: the cap revokes from the front.
      this.ephemeral.delete(tokenHash);
      this.ephemeral.set(tokenHash, ephemeral);
      return ephemeral;
    }
    const wanted = Buffer.from(tokenHash, 'hex');
    for (const record of this.records.values()) {
      if (timingSafeEqual(Buffer.from(record.tokenHash, 'hex'), wanted)) {
        return { name: record.name, tokenHash, persistent: true, settings: record.settings };
      }
    }
    return null;
  }

  /** The identity's policy as it is now (the person may change it while the agent is connected); null once revoked. */
  currentSettings(identity: AgentIdentity): PolicySettings | null {
    if (!identity.persistent) return this.ephemeral.get(identity.tokenHash)?.settings ?? null;
    const record = this.records.get(identity.name);
    return record && record.tokenHash === identity.tokenHash ? record.settings : null;
  }

  /**
   * A paired agent without a project takes `project` as its own (its first bridge's folder, when
   * it can be one): the person sees it in the agents panel and changes it there.
   */
  adoptProject(identity: AgentIdentity, project: string): void {
    const record = this.records.get(identity.name);
    if (!identity.persistent || !record || record.tokenHash !== identity.tokenHash || record.settings.project) return;
    record.settings = { ...record.settings, project };
    this.save();
  }

  isPaired(name: string): boolean {
    return this.records.has(name.trim());
  }

  /** A paired agent's name the person would read as `name` (`sameAgentName`). */
  isPairedLike(name: string): boolean {
    if (this.isPaired(name)) return true;
    for (const paired of this.records.keys()) if (sameAgentName(paired, name)) return true;
    return false;
  }

  list(): Array<{ name: string; createdAt: string; settings: PolicySettings }> {
    return [...this.records.values()].map(({ name, createdAt, settings }) => ({ name, createdAt, settings }));
  }

  setSettings(name: string, settings: PolicySettings): void {
    const record = this.records.get(name);
    if (!record) throw new TandemError('not_found', `No paired agent named "${name}".`);
    record.settings = settings;
    this.save();
  }

  /** Revoking ends the agent's connections (listeners close them). */
  revoke(name: string): void {
    const record = this.records.get(name);
    if (!record) throw new TandemError('not_found', `No paired agent named "${name}".`);
    this.records.delete(name);
    this.save();
    this.emitRevoked(record);
  }

  revokeEphemeral(tokenHash: string): void {
    const identity = this.ephemeral.get(tokenHash);
    if (!identity) return;
    this.ephemeral.delete(tokenHash);
    this.emitRevoked(identity);
  }

  onRevoked(listener: (identity: { name: string; tokenHash: string }) => void): () => void {
    this.revokeListeners.add(listener);
    return () => this.revokeListeners.delete(listener);
  }

  private emitRevoked(identity: { name: string; tokenHash: string }): void {
    for (const listener of this.revokeListeners) listener({ name: identity.name, tokenHash: identity.tokenHash });
  }
}
