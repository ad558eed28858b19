import { TandemError } from '../../../shared/errors.js';
import type { PendingRequests } from './requests.js';

/**
 * Questions one agent (one token) may have waiting for the person at once, approvals and
 * handoffs together. The excess is refused with `capacity` (agent-api.md's code for a bound
 * reached): a hostile agent cannot fill the person's question stack, nor the host's memory, nor
 * the shared bound of each kind (64) that other agents' questions need.
 */
export const maxQuestionsPerAgent = 8;

/**
 * Whose token asked each open question to the person (an approval or a handoff request), so
 * that an agent's questions go with it: when its last session disconnects, or it is revoked,
 * approving afterwards must run nothing. As many entries as open questions (each kind is bounded).
 */
export class QuestionOwners<Approval, ApprovalDecision, Handoff, HandoffDecision> {
  private readonly askedBy = new Map<string, string>();

  constructor(
    private readonly approvals: PendingRequests<Approval, ApprovalDecision>,
    private readonly handoffs: PendingRequests<Handoff, HandoffDecision>,
    /** How a withdrawn approval answers the agent's pending send: a rejection that never runs. */
    private readonly withdrawn: (reason: string) => ApprovalDecision,
  ) {}

  /** How many questions of `tokenHash` wait now (withdrawn ones, whose decision never settles, are dropped here). */
  waitingOf(tokenHash: string): number {
    let count = 0;
    for (const [id, asker] of [...this.askedBy]) {
      if (!this.approvals.get(id) && !this.handoffs.get(id)) {
        this.askedBy.delete(id);
        continue;
      }
      if (asker === tokenHash) count += 1;
    }
    return count;
  }

  /** Opens a question on behalf of `tokenHash`; refused with `capacity` past `maxQuestionsPerAgent` waiting. */
  ask<Info, Decision>(requests: PendingRequests<Info, Decision>, tokenHash: string, info: Info): { id: string; decision: Promise<Decision> } {
    if (this.waitingOf(tokenHash) >= maxQuestionsPerAgent) {
      throw new TandemError(
        'capacity',
        `This agent already has ${maxQuestionsPerAgent} questions waiting for the person; wait for their answers before asking more.`,
      );
    }
    const request = requests.open(info);
    this.askedBy.set(request.id, tokenHash);
    void request.decision.then(() => this.askedBy.delete(request.id));
    return request;
  }

  withdrawAllOf(tokenHash: string, reason: string): void {
    for (const [id, asker] of [...this.askedBy]) {
      if (asker !== tokenHash) continue;
      this.askedBy.delete(id);
      if (this.approvals.get(id)) this.approvals.answer(id, this.withdrawn(reason));
      else this.handoffs.withdraw(id);
    }
  }
}
