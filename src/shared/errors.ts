/** Error codes from the agent API contract (shared/design/agent-api.md). */
export const ERROR_CODES = [
  'not_running',
  'pairing_pending',
  'pairing_denied',
  'not_found',
  'forbidden',
  'user_control',
  'busy',
  'rejected',
  'capacity',
  'queue_full',
  'input_too_large',
  'invalid_argument',
  'exited',
  'shell_not_found',
  'shell_unsupported',
  'startup_timeout',
  'sandbox_unavailable',
  // Tandem itself failed (a bug or an unexpected fault), not the caller's arguments: the message
  // says what failed. An addition to agent-api.md's list (issue 25).
  'internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** An error as a value: a contract code and one sentence a person can act on. */
export class TandemError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'TandemError';
    this.code = code;
  }

  toJSON(): { code: ErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}
