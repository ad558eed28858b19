import type { PendingRequests } from './requests.js';

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

  /** Opens a question on behalf of `tokenHash`. */
  ask<Info, Decision>(requests: PendingRequests<Info, Decision>, tokenHash: string, info: Info): { id: string; decision: Promise<Decision> } {
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
