import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { describeIssue } from '../../../shared/contract.js';
import { TandemError } from '../../../shared/errors.js';
import type { Clock } from '../../clock.js';
import { systemClock } from '../../clock.js';
import { readBody, sendJson } from '../../web/http.js';
import { checkRequest } from '../../web/origin.js';
import { defaultPolicy, type PolicySettings } from '../judge/policy.js';
import { tcpPeer } from './peer.js';
import { acceptableProject } from '../service/open-workspace.js';
import { PendingRequests } from './requests.js';
import { checkAgentName, distinctName, type TokenStore } from './tokens.js';

/** What a bridge claims about itself; shown to the person as a claim, not a proof. */
export const pairingClaimSchema = z.object({
  name: z.string().min(1).max(64),
  pid: z
    .number()
    .int()
    .min(0)
    .max(2 ** 31),
  exe: z.string().max(4096),
  cwd: z.string().max(4096),
});
export type PairingClaim = z.output<typeof pairingClaimSchema>;

export type PairingDecision = 'once' | 'always' | 'deny';

/** `expired`: the request lapsed or its connection replaced it: ask again. */
export type Outcome =
  { state: 'pending' } | { state: 'allowed'; token: string; persistent: boolean; name: string } | { state: 'denied' } | { state: 'expired' };

/** How long an answered request can still be polled for its token, and an unanswered one waits. */
export const answeredTtlMs = 5 * 60_000;
export const pendingTtlMs = 10 * 60_000;
/** Requests waiting for the person at once; past this a new one is refused (`capacity`), never one pushed out. */
export const maxPendingPairings = 64;
/**
 * Waiting requests per uid and per process (both read from the kernel where it can): past these a
 * new one is refused as `capacity`, so a flood of one user or one process never pushes a waiting
 * request out, and the person sees at most this many cards from it. One per connection (a second
 * on the same connection replaces its first).
 */
export const maxPendingPerUid = 16;
export const maxPendingPerProcess = 4;
/** "Deny all" also refuses new requests for this long (`pairing_denied`), visibly (`pairingsPausedUntil`). */
export const denyAllPauseMs = 60_000;
/** Claims the person denied, kept until lifted; past this the oldest denial is forgotten. */
export const maxDeniedClaims = 256;
/** Outcomes kept for polling at once; past this the oldest answered ones go first. */
export const maxOutcomes = 256;

import type { SandboxMode } from '../../sandbox/types.js';
import type { PeerFacts } from './peer.js';

const trustedPolicy: PolicySettings = { ...defaultPolicy, policy: 'always' };

export interface DeniedClaim {
  id: string;
  name: string;
  exe: string;
  cwd: string;
  at: string;
}

/** Who asks: the connection the request came on (only it may replace the request) and what the kernel says about its process. */
export interface PairingSource {
  connection: object;
  peer: PeerFacts;
}

/** A waiting request as the person sees it: the claims and, apart, the verified facts. */
export type PairingInfo = PairingClaim & { at: string; verified: PeerFacts };

/** A claim is what the person judges: the name, program (the kernel's, where read) and directory (the pid changes on every restart). */
function claimKey(claim: Pick<PairingClaim, 'name' | 'exe' | 'cwd'>): string {
  return JSON.stringify([claim.name, claim.exe, claim.cwd]);
}

/** A request made by Tandem's own code (tests, the UI's own pairing): no connection and no peer to verify. */
function inProcess(): PairingSource {
  return { connection: {}, peer: { uid: null, pid: null, exe: null, by: 'none', via: 'in-process' } };
}

function newId(): string {
  return randomBytes(9).toString('base64url');
}

export interface PairingBrokerOptions {
  trustLocalAgents?: boolean;
  /** The person's home: a claimed folder there or above it is no project (open-workspace.ts `notAProject`). */
  home?: string;
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
  /** The person's uid: only requests from it pair (default: this process's). */
  ownUid?: number | null;
  /** Who is on the other end of a `/pair` TCP connection (default: the kernel's TCP table, Linux). */
  tcpPeer?: (socket: { localPort?: number; remotePort?: number }) => PeerFacts;
}

/**
 * Pairing requests from bridges that have no token: the person allows once, always, or denies.
 * Under --trust-local-agents every request of the person's uid is allowed at once and runs
 * without approvals. A request comes with who asks (`PairingSource`): requests of another uid
 * are refused; a waiting request is replaced only by its own connection; waiting requests are
 * bounded per uid, per process and in all, and past a bound a new one is refused rather than one
 * pushed out. A denied claim stays denied (answered at once, no question) until the person lifts
 * the denial; "Deny all" also refuses every new request for `denyAllPauseMs`.
 */
export class PairingBroker {
  readonly requests = new PendingRequests<PairingInfo, PairingDecision>('pairing', maxPendingPairings);
  private readonly outcomes = new Map<string, { outcome: Outcome; expires: number }>();
  /** The waiting request of each connection (at most one). */
  private readonly byConnection = new Map<object, string>();
  private readonly connectionOf = new Map<string, object>();
  /** Requests made on the bridge channel: their outcome goes to that connection only, never to a TCP poll. */
  private readonly channelBorn = new Set<string>();
  /** TCP requests have no lasting connection (each poll is a new request): the verified process stands for it. */
  private readonly tcpKeys = new Map<number, object>();
  /** Lapse timers of waiting requests (as many as `requests`). */
  private readonly lapses = new Map<string, ReturnType<Clock['setTimeout']>>();
  private readonly denied = new Map<string, DeniedClaim>();
  private readonly deniedListeners = new Set<() => void>();
  private readonly outcomeWaiters = new Map<string, (outcome: Outcome) => void>();
  private readonly clock: Clock;
  private readonly wallNow: () => number;
  /** Monotonic time until which new requests are refused ("Deny all"), and its wall-clock twin for the person. */
  private pausedUntil = 0;
  private pausedUntilWall = 0;
  private pauseTimer: ReturnType<Clock['setTimeout']> | null = null;
  /** Set while the bridge channel listens: then `/pair` over TCP is refused (the channel proves who asks). */
  channelPath: string | null = null;

  constructor(
    private readonly tokens: TokenStore,
    private readonly opts: PairingBrokerOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock;
    this.wallNow = opts.wallNow ?? Date.now;
  }

  private get ownUid(): number | null {
    return this.opts.ownUid !== undefined ? this.opts.ownUid : (process.getuid?.() ?? null);
  }

  /** Whether this claimed name would show as an agent the person already knows. */
  nameInUse(name: string): boolean {
    return this.opts.nameInUse?.(name) ?? this.tokens.isPairedLike(name);
  }

  /** While "Deny all" pauses new requests: when the pause ends (ISO), else null. */
  pausedUntilIso(): string | null {
    return this.clock.now() < this.pausedUntil ? new Date(this.pausedUntilWall).toISOString() : null;
  }

  /**
   * A request from `from`; returns its id (poll it, or `waitOutcome`). Throws `forbidden` for
   * another uid, `pairing_denied` while paused, `capacity` past a bound.
   */
  request(claim: PairingClaim, from: PairingSource = inProcess()): string {
    const name = checkAgentName(claim.name);
    this.expire();
    const own = this.ownUid;
    if (from.peer.uid !== null && own !== null && from.peer.uid !== own) {
      throw new TandemError('forbidden', `Only processes of the user running Tandem (uid ${own}) can ask to pair; this one runs as uid ${from.peer.uid}.`);
    }
    if (from.peer.uid === null && from.peer.via === 'tcp' && own !== null && process.platform === 'linux') {
      throw new TandemError('forbidden', 'Tandem could not tell which user sent this pairing request; ask again from a bridge (tandem mcp).');
    }
    if (this.opts.trustLocalAgents) {
      const id = `trusted-${newId()}`;
      const display = distinctName(name, (candidate) => this.nameInUse(candidate));
      this.remember(id, {
        state: 'allowed',
        token: this.tokens.issueEphemeral(display, { ...trustedPolicy, sandbox: this.opts.trustedSandbox ?? 'off' }),
        persistent: false,
        name: display,
      });
      return id;
    }
    const paused = this.pausedUntilIso();
    if (paused)
      throw new TandemError(
        'pairing_denied',
        `The person denied all pairing requests; new ones are refused until ${paused}. Ask them, then call the tool again.`,
      );
    // The kernel's executable where it was read: a claim of another program cannot slip past a denial.
    const exe = from.peer.exe ?? claim.exe;
    const key = claimKey({ name, exe, cwd: claim.cwd });
    if (this.denied.has(key)) {
      const id = newId();
      this.remember(id, { state: 'denied' });
      return id;
    }
    const existing = this.byConnection.get(from.connection);
    const current = existing ? this.requests.get(existing) : null;
    if (existing && current) {
      if (claimKey(current.info) === key && current.info.pid === claim.pid) return existing;
      // Only the connection that asked replaces its own request.
      this.pushOut(existing);
    }
    const waiting = this.requests.list();
    if (waiting.length >= maxPendingPairings)
      throw new TandemError('capacity', `${maxPendingPairings} pairing requests already wait for the person; try again later.`);
    const uid = from.peer.uid;
    if (waiting.filter((request) => request.verified.uid === uid).length >= maxPendingPerUid) {
      throw new TandemError('capacity', `${maxPendingPerUid} pairing requests of this user already wait for the person; try again once they are answered.`);
    }
    const pid = from.peer.pid;
    if (pid !== null && waiting.filter((request) => request.verified.pid === pid).length >= maxPendingPerProcess) {
      throw new TandemError(
        'capacity',
        `${maxPendingPerProcess} pairing requests of process ${pid} already wait for the person; try again once they are answered.`,
      );
    }
    const { id, decision } = this.requests.open({ ...claim, name, at: new Date(this.wallNow()).toISOString(), verified: { ...from.peer } });
    this.byConnection.set(from.connection, id);
    this.connectionOf.set(id, from.connection);
    if (from.peer.via === 'unix-socket' || from.peer.via === 'named-pipe') this.channelBorn.add(id);
    this.remember(id, { state: 'pending' });
    // Unanswered requests lapse, so idle claims cannot fill the person's queue for good.
    this.lapses.set(
      id,
      this.clock.setTimeout(() => this.pushOut(id), pendingTtlMs),
    );
    void decision.then((answer) => {
      this.clearLapse(id);
      this.forgetConnection(id);
      if (answer === 'deny') {
        this.deny({ name, exe, cwd: claim.cwd });
        return this.remember(id, { state: 'denied' });
      }
      const persistent = answer === 'always';
      // Never replace an agent paired under the same name (its token and policy) by a claim.
      if (persistent && this.tokens.isPaired(name)) return this.remember(id, { state: 'denied' });
      const display = persistent ? name : distinctName(name, (candidate) => this.nameInUse(candidate));
      // Allowed with its card, the folder the card showed is the project the person confirmed.
      const project = persistent ? acceptableProject(claim.cwd || null, this.opts.home ?? '') : null;
      const token = persistent
        ? this.tokens.pair(name, { ...this.tokens.newSettings(), ...(project ? { project } : {}) })
        : this.tokens.issueEphemeral(display);
      this.remember(id, { state: 'allowed', token, persistent, name: display });
    });
    return id;
  }

  /** The connection key of a TCP requester: its process where the kernel named it (bounded: one per waiting request), else a fresh one. */
  private tcpConnection(pid: number | null): object {
    if (pid === null) return {};
    for (const [known, key] of this.tcpKeys) if (!this.byConnection.has(key)) this.tcpKeys.delete(known);
    const key = this.tcpKeys.get(pid) ?? {};
    this.tcpKeys.set(pid, key);
    return key;
  }

  /** Whether a request of this connection waits for the person. */
  waitingOn(connection: object): boolean {
    const id = this.byConnection.get(connection);
    return id !== undefined && this.requests.get(id) !== null;
  }

  /** The connection a request came on closed: its waiting request goes (nobody is left to hand a token to). */
  connectionClosed(connection: object): void {
    const id = this.byConnection.get(connection);
    if (id) this.pushOut(id);
    this.byConnection.delete(connection);
  }

  /**
   * The outcome once it is known (answered, lapsed or replaced); an allowed token is handed over
   * once, here or by `poll`.
   */
  waitOutcome(id: string): Promise<Outcome> {
    const now = this.outcomes.get(id)?.outcome;
    if (now && now.state !== 'pending') return Promise.resolve(this.poll(id));
    return new Promise((resolve) => this.outcomeWaiters.set(id, () => resolve(this.poll(id))));
  }

  private forgetConnection(id: string): void {
    const connection = this.connectionOf.get(id);
    this.connectionOf.delete(id);
    if (connection && this.byConnection.get(connection) === id) this.byConnection.delete(connection);
  }

  private clearLapse(id: string): void {
    const timer = this.lapses.get(id);
    if (timer !== undefined) this.clock.clearTimeout(timer);
    this.lapses.delete(id);
  }

  private pushOut(id: string): void {
    this.clearLapse(id);
    if (!this.requests.get(id)) return;
    this.forgetConnection(id);
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

  /** "Deny all": every waiting request is denied, each claim stays denied, and new requests are refused for `denyAllPauseMs`. */
  denyAll(): void {
    for (const request of this.requests.list()) this.requests.answer(request.id, 'deny');
    this.pausedUntil = this.clock.now() + denyAllPauseMs;
    this.pausedUntilWall = this.wallNow() + denyAllPauseMs;
    if (this.pauseTimer !== null) this.clock.clearTimeout(this.pauseTimer);
    // The panel shows the pause; it is told when the pause ends.
    this.pauseTimer = this.clock.setTimeout(() => {
      this.pauseTimer = null;
      for (const listener of this.deniedListeners) listener();
    }, denyAllPauseMs);
    for (const listener of this.deniedListeners) listener();
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
      throw new TandemError(
        'invalid_argument',
        `An agent named "${info.name}" is already paired or connected; allow this one once, or revoke that agent first.`,
      );
    }
    this.requests.answer(id, decision);
  }

  private remember(id: string, outcome: Outcome): void {
    this.outcomes.delete(id);
    this.outcomes.set(id, { outcome, expires: this.clock.now() + answeredTtlMs });
    const waiter = outcome.state === 'pending' ? undefined : this.outcomeWaiters.get(id);
    if (waiter) {
      this.outcomeWaiters.delete(id);
      waiter(outcome);
    }
    // Pending ones are at most the person's queue (64), so answered ones can always make room.
    for (const [oldId, entry] of this.outcomes) {
      if (this.outcomes.size <= maxOutcomes) break;
      if (entry.outcome.state !== 'pending') {
        this.outcomes.delete(oldId);
        this.channelBorn.delete(oldId);
      }
    }
  }

  private expire(): void {
    const now = this.clock.now();
    for (const [id, entry] of this.outcomes) {
      if (entry.outcome.state === 'pending' && !this.requests.get(id)) this.outcomes.set(id, { outcome: { state: 'expired' }, expires: now + answeredTtlMs });
      else if (entry.expires < now && entry.outcome.state !== 'pending') {
        this.outcomes.delete(id);
        this.channelBorn.delete(id);
      }
    }
  }

  /** `/pair` (POST a claim) and `/pair/<id>` (GET the outcome). */
  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const reply = (status: number, body: object) => sendJson(res, status, body);
    const check = checkRequest({ host: req.headers.host, origin: req.headers.origin }, this.opts.allowOrigins);
    if (!check.ok) return reply(check.status, { error: { code: 'forbidden', message: check.message } });
    // Browsers can POST JSON cross-site only with a preflight we never grant; still refuse any Origin here.
    if (req.headers.origin) return reply(403, { error: { code: 'forbidden', message: 'Pairing requests come from agents, not web pages.' } });
    try {
      if (req.method === 'POST' && path === '/pair') {
        // A TCP connection proves no user on its own: where the bridge channel listens, pairing goes there.
        if (this.channelPath !== null) {
          throw new TandemError(
            'forbidden',
            `Pairing requests come over the bridge channel (bridgeSocket in instance.json: ${this.channelPath}), which proves who asks; use a current \`tandem mcp\`.`,
          );
        }
        const text = await readBody(req, 16 * 1024);
        if (text === null) throw new TandemError('input_too_large', 'A pairing request is at most 16 KiB.');
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          throw new TandemError('invalid_argument', 'The pairing request is not JSON.');
        }
        const parsed = pairingClaimSchema.safeParse(body);
        if (!parsed.success) throw new TandemError('invalid_argument', describeIssue(parsed.error));
        const peer = (this.opts.tcpPeer ?? tcpPeer)(req.socket);
        const id = this.request(parsed.data, { connection: this.tcpConnection(peer.pid), peer });
        return reply(202, { requestId: id });
      }
      const match = /^\/pair\/([\w-]{1,64})$/.exec(path);
      if (req.method === 'GET' && match) {
        // A token goes only to the user who asked, and never over TCP for a request made on the channel.
        const peer = (this.opts.tcpPeer ?? tcpPeer)(req.socket);
        const own = this.ownUid;
        if (
          this.channelPath !== null ||
          this.channelBorn.has(match[1]!) ||
          (own !== null && peer.uid !== own && !(peer.uid === null && process.platform !== 'linux'))
        ) {
          throw new TandemError('forbidden', 'This pairing request is answered on the connection that made it.');
        }
        return reply(200, this.poll(match[1]!));
      }
      return reply(404, { error: { code: 'not_found', message: 'POST /pair with { name, pid, exe, cwd }, then GET /pair/<requestId>.' } });
    } catch (error) {
      const body =
        error instanceof TandemError ? error.toJSON() : { code: 'internal', message: `Tandem failed to handle the pairing request: ${String(error)}` };
      return reply(
        body.code === 'not_found'
          ? 404
          : body.code === 'forbidden' || body.code === 'pairing_denied'
            ? 403
            : body.code === 'capacity'
              ? 503
              : body.code === 'internal'
                ? 500
                : 400,
        { error: body },
      );
    }
  }
}
