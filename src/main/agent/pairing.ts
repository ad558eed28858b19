import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { describeIssue } from '../../shared/contract.js';
import { TandemError } from '../../shared/errors.js';
import type { Clock } from '../terminal/clock.js';
import { systemClock } from '../terminal/clock.js';
import { checkRequest } from '../web/origin.js';
import { defaultPolicy, type PolicySettings } from './policy.js';
import { PendingRequests } from './requests.js';
import { checkAgentName, distinctName, type TokenStore } from './tokens.js';

/** What a bridge claims about itself; shown to the person as a claim, not a proof. */
export const pairingClaimSchema = z.object({
  name: z.string().min(1).max(64),
  pid: z.number().int().min(0).max(2 ** 31),
  exe: z.string().max(4096),
  cwd: z.string().max(4096),
});
export type PairingClaim = z.output<typeof pairingClaimSchema>;

export type PairingDecision = 'once' | 'always' | 'deny';

/** `expired`: the request was pushed out (a newer one of the same claim, or a flood) or lapsed: ask again. */
type Outcome = { state: 'pending' } | { state: 'allowed'; token: string; persistent: boolean; name: string } | { state: 'denied' } | { state: 'expired' };

/** How long an answered request can still be polled for its token, and an unanswered one waits. */
export const answeredTtlMs = 5 * 60_000;
export const pendingTtlMs = 10 * 60_000;
/** Requests waiting for the person at once; a new one past this pushes one out (see `victim`). */
export const maxPendingPairings = 64;
/** Claims the person denied, kept until lifted; past this the oldest denial is forgotten. */
export const maxDeniedClaims = 256;
/** Outcomes kept for polling at once; past this the oldest answered ones go first. */
export const maxOutcomes = 256;

import type { SandboxMode } from '../sandbox/types.js';

const trustedPolicy: PolicySettings = { ...defaultPolicy, policy: 'always' };

export interface DeniedClaim {
  id: string;
  name: string;
  exe: string;
  cwd: string;
  at: string;
}

/** A claim is what the person judges: the name, program and directory (the pid changes on every restart). */
function claimKey(claim: Pick<PairingClaim, 'name' | 'exe' | 'cwd'>): string {
  return JSON.stringify([claim.name, claim.exe, claim.cwd]);
}

function newId(): string {
  return randomBytes(9).toString('base64url');
}

export interface PairingBrokerOptions {
  trustLocalAgents?: boolean;
  allowOrigins?: readonly string[];
  clock?: Clock;
  /**
   * Wall-clock time (ms since the epoch) for the timestamps shown to the person. `clock` is
   * monotonic (performance.now(): ms since the process started), right for timers but a 1970
   * date when printed.
   */
  wallNow?: () => number;
  /** Whether a display name is taken: a paired agent, or an agent connected now. */
  nameInUse?: (name: string) => boolean;
  /** The sandbox of agents allowed by `--trust-local-agents`. */
  trustedSandbox?: SandboxMode;
}

/**
 * Pairing requests from bridges that have no token: the person allows once, always, or denies.
 * Under --trust-local-agents every request is allowed at once and runs without approvals.
 * Bounded and merged: one request per claim (the same process posting again gets the same one,
 * a newer process of the same claim replaces it); at most `maxPendingPairings`, where a new
 * request pushes out the oldest of the largest group of requests from one program and directory,
 * so a flood from one program cannot keep another's request from showing. A denied claim stays
 * denied (answered at once, no question) until the person lifts the denial.
 */
export class PairingBroker {
  readonly requests = new PendingRequests<PairingClaim & { at: string }, PairingDecision>('pairing', maxPendingPairings);
  private readonly outcomes = new Map<string, { outcome: Outcome; expires: number }>();
  private readonly byClaim = new Map<string, string>();
  /** Lapse timers of waiting requests (as many as `requests`). */
  private readonly lapses = new Map<string, ReturnType<Clock['setTimeout']>>();
  private readonly denied = new Map<string, DeniedClaim>();
  private readonly deniedListeners = new Set<() => void>();
  private readonly clock: Clock;
  private readonly wallNow: () => number;

  constructor(
    private readonly tokens: TokenStore,
    private readonly opts: PairingBrokerOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock;
    this.wallNow = opts.wallNow ?? Date.now;
  }

  /** Whether this claimed name would show as an agent the person already knows. */
  nameInUse(name: string): boolean {
    return this.opts.nameInUse?.(name) ?? this.tokens.isPaired(name);
  }

  request(claim: PairingClaim): string {
    const name = checkAgentName(claim.name);
    this.expire();
    if (this.opts.trustLocalAgents) {
      const id = `trusted-${newId()}`;
      const display = distinctName(name, (candidate) => this.nameInUse(candidate));
      this.remember(id, { state: 'allowed', token: this.tokens.issueEphemeral(display, { ...trustedPolicy, sandbox: this.opts.trustedSandbox ?? 'off' }), persistent: false, name: display });
      return id;
    }
    const key = claimKey({ ...claim, name });
    if (this.denied.has(key)) {
      const id = newId();
      this.remember(id, { state: 'denied' });
      return id;
    }
    const existing = this.byClaim.get(key);
    const current = existing ? this.requests.get(existing) : null;
    if (existing && current) {
      if (current.info.pid === claim.pid) return existing;
      this.pushOut(existing);
    }
    if (this.requests.list().length >= maxPendingPairings) this.pushOut(this.victim());
    const { id, decision } = this.requests.open({ ...claim, name, at: new Date(this.wallNow()).toISOString() });
    this.byClaim.set(key, id);
    this.remember(id, { state: 'pending' });
    // Unanswered requests lapse, so idle claims cannot fill the person's queue for good.
    this.lapses.set(
      id,
      this.clock.setTimeout(() => this.pushOut(id), pendingTtlMs),
    );
    void decision.then((answer) => {
      this.clearLapse(id);
      if (this.byClaim.get(key) === id) this.byClaim.delete(key);
      if (answer === 'deny') {
        this.deny({ ...claim, name });
        return this.remember(id, { state: 'denied' });
      }
      const persistent = answer === 'always';
      // Never replace an agent paired under the same name (its token and policy) by a claim.
      if (persistent && this.tokens.isPaired(name)) return this.remember(id, { state: 'denied' });
      const display = persistent ? name : distinctName(name, (candidate) => this.nameInUse(candidate));
      const token = persistent ? this.tokens.pair(name) : this.tokens.issueEphemeral(display);
      this.remember(id, { state: 'allowed', token, persistent, name: display });
    });
    return id;
  }

  /** The request to push out for a new one: the oldest of the largest group by program and directory. */
  private victim(): string {
    const groups = new Map<string, string[]>();
    for (const request of this.requests.list()) {
      const group = JSON.stringify([request.exe, request.cwd]);
      groups.set(group, [...(groups.get(group) ?? []), request.id]);
    }
    let largest: string[] = [];
    for (const ids of groups.values()) if (ids.length > largest.length) largest = ids;
    return largest[0]!;
  }

  private clearLapse(id: string): void {
    const timer = this.lapses.get(id);
    if (timer !== undefined) this.clock.clearTimeout(timer);
    this.lapses.delete(id);
  }

  private pushOut(id: string): void {
    this.clearLapse(id);
    const info = this.requests.get(id)?.info;
    if (!info) return;
    if (this.byClaim.get(claimKey(info)) === id) this.byClaim.delete(claimKey(info));
    this.requests.withdraw(id);
    this.remember(id, { state: 'expired' });
  }

  private deny(claim: Pick<PairingClaim, 'name' | 'exe' | 'cwd'>): void {
    const key = claimKey(claim);
    this.denied.delete(key);
    this.denied.set(key, { id: newId(), name: claim.name, exe: claim.exe, cwd: claim.cwd, at: new Date(this.wallNow()).toISOString() });
    while (this.denied.size > maxDeniedClaims) this.denied.delete(this.denied.keys().next().value!);
    for (const listener of this.deniedListeners) listener();
  }

  /** Claims the person denied, newest last. */
  deniedClaims(): DeniedClaim[] {
    return [...this.denied.values()];
  }

  /** The person lifts a denial: that claim is asked about again on its next request. */
  liftDenial(id: string): void {
    const entry = [...this.denied.entries()].find(([, claim]) => claim.id === id);
    if (!entry) throw new TandemError('not_found', 'That denial was already lifted.');
    this.denied.delete(entry[0]);
    for (const listener of this.deniedListeners) listener();
  }

  /** "Deny all": every waiting request is denied, and each claim stays denied. */
  denyAll(): void {
    for (const request of this.requests.list()) this.requests.answer(request.id, 'deny');
  }

  onDeniedChange(listener: () => void): () => void {
    this.deniedListeners.add(listener);
    return () => this.deniedListeners.delete(listener);
  }

  /** The bridge polls; an allowed token is handed over once. */
  poll(id: string): Outcome {
    this.expire();
    const entry = this.outcomes.get(id);
    if (!entry) throw new TandemError('not_found', 'Unknown or expired pairing request; start a new one.');
    if (entry.outcome.state === 'allowed') this.outcomes.set(id, { outcome: { state: 'denied' }, expires: entry.expires });
    return entry.outcome;
  }

  answer(id: string, decision: PairingDecision): void {
    const info = this.requests.get(id)?.info;
    if (decision === 'always' && info && this.nameInUse(info.name)) {
      throw new TandemError('invalid_argument', `An agent named "${info.name}" is already paired or connected; allow this one once, or revoke that agent first.`);
    }
    this.requests.answer(id, decision);
  }

  private remember(id: string, outcome: Outcome): void {
    this.outcomes.delete(id);
    this.outcomes.set(id, { outcome, expires: this.clock.now() + answeredTtlMs });
    // Pending ones are at most the person's queue (64), so answered ones can always make room.
    for (const [oldId, entry] of this.outcomes) {
      if (this.outcomes.size <= maxOutcomes) break;
      if (entry.outcome.state !== 'pending') this.outcomes.delete(oldId);
    }
  }

  private expire(): void {
    const now = this.clock.now();
    for (const [id, entry] of this.outcomes) {
      if (entry.outcome.state === 'pending' && !this.requests.get(id)) this.outcomes.set(id, { outcome: { state: 'expired' }, expires: now + answeredTtlMs });
      else if (entry.expires < now && entry.outcome.state !== 'pending') this.outcomes.delete(id);
    }
  }

  /** `/pair` (POST a claim) and `/pair/<id>` (GET the outcome). */
  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const reply = (status: number, body: object) => {
      res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(body));
    };
    const check = checkRequest({ host: req.headers.host, origin: req.headers.origin }, this.opts.allowOrigins);
    if (!check.ok) return reply(check.status, { error: { code: 'forbidden', message: check.message } });
    // Browsers can POST JSON cross-site only with a preflight we never grant; still refuse any Origin here.
    if (req.headers.origin) return reply(403, { error: { code: 'forbidden', message: 'Pairing requests come from agents, not web pages.' } });
    try {
      if (req.method === 'POST' && path === '/pair') {
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of req) {
          size += (chunk as Buffer).length;
          if (size > 16 * 1024) throw new TandemError('input_too_large', 'A pairing request is at most 16 KiB.');
          chunks.push(chunk as Buffer);
        }
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          throw new TandemError('invalid_argument', 'The pairing request is not JSON.');
        }
        const parsed = pairingClaimSchema.safeParse(body);
        if (!parsed.success) throw new TandemError('invalid_argument', describeIssue(parsed.error));
        const id = this.request(parsed.data);
        return reply(202, { requestId: id });
      }
      const match = /^\/pair\/([\w-]{1,64})$/.exec(path);
      if (req.method === 'GET' && match) return reply(200, this.poll(match[1]!));
      return reply(404, { error: { code: 'not_found', message: 'POST /pair with { name, pid, exe, cwd }, then GET /pair/<requestId>.' } });
    } catch (error) {
      const body = error instanceof TandemError ? error.toJSON() : { code: 'invalid_argument', message: String(error) };
      return reply(body.code === 'not_found' ? 404 : 400, { error: body });
    }
  }
}
