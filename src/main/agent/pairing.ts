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
import { checkAgentName, type TokenStore } from './tokens.js';

/** What a bridge claims about itself; shown to the person as a claim, not a proof. */
export const pairingClaimSchema = z.object({
  name: z.string().min(1).max(64),
  pid: z.number().int().min(0).max(2 ** 31),
  exe: z.string().max(4096),
  cwd: z.string().max(4096),
});
export type PairingClaim = z.output<typeof pairingClaimSchema>;

export type PairingDecision = 'once' | 'always' | 'deny';

type Outcome = { state: 'pending' } | { state: 'allowed'; token: string; persistent: boolean; name: string } | { state: 'denied' };

/** How long an answered request can still be polled for its token, and an unanswered one waits. */
export const answeredTtlMs = 5 * 60_000;
export const pendingTtlMs = 10 * 60_000;
/** Outcomes kept for polling at once; past this the oldest answered ones go first. */
export const maxOutcomes = 256;

import type { SandboxMode } from '../sandbox/types.js';

const trustedPolicy: PolicySettings = { ...defaultPolicy, policy: 'always' };

/**
 * Pairing requests from bridges that have no token: the person allows once, always, or denies.
 * Under --trust-local-agents every request is allowed at once and runs without approvals.
 */
export class PairingBroker {
  readonly requests = new PendingRequests<PairingClaim & { at: string }, PairingDecision>('pairing');
  private readonly outcomes = new Map<string, { outcome: Outcome; expires: number }>();
  private readonly clock: Clock;

  constructor(
    private readonly tokens: TokenStore,
    private readonly opts: { trustLocalAgents?: boolean; allowOrigins?: readonly string[]; clock?: Clock; trustedSandbox?: SandboxMode } = {},
  ) {
    this.clock = opts.clock ?? systemClock;
  }

  request(claim: PairingClaim): string {
    const name = checkAgentName(claim.name);
    this.expire();
    if (this.opts.trustLocalAgents) {
      const id = `trusted-${randomBytes(9).toString('base64url')}`;
      this.remember(id, { state: 'allowed', token: this.tokens.issueEphemeral(name, { ...trustedPolicy, sandbox: this.opts.trustedSandbox ?? 'off' }), persistent: false, name });
      return id;
    }
    const { id, decision } = this.requests.open({ ...claim, name, at: new Date().toISOString() });
    this.remember(id, { state: 'pending' });
    // Unanswered requests lapse, so idle claims cannot fill the person's queue for good.
    const lapse = this.clock.setTimeout(() => this.requests.withdraw(id), pendingTtlMs);
    void decision.then(() => this.clock.clearTimeout(lapse));
    void decision.then((answer) => {
      if (answer === 'deny') return this.remember(id, { state: 'denied' });
      const persistent = answer === 'always';
      // Never replace an agent paired under the same name (its token and policy) by a claim.
      if (persistent && this.tokens.isPaired(name)) return this.remember(id, { state: 'denied' });
      const token = persistent ? this.tokens.pair(name) : this.tokens.issueEphemeral(name);
      this.remember(id, { state: 'allowed', token, persistent, name });
    });
    return id;
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
    if (decision === 'always' && info && this.tokens.isPaired(info.name)) {
      throw new TandemError('invalid_argument', `An agent named "${info.name}" is already paired; allow this one once, or revoke the paired one first.`);
    }
    this.requests.answer(id, decision);
  }

  private remember(id: string, outcome: Outcome): void {
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
      if (entry.outcome.state === 'pending' && !this.requests.get(id)) this.outcomes.set(id, { outcome: { state: 'denied' }, expires: now + answeredTtlMs });
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
