/** An error as the UI shows it: the contract's code when there is one, and its sentence. */
export interface Problem {
  code: string | null;
  message: string;
}

export function toProblem(error: unknown): Problem {
  if (error && typeof error === 'object') {
    const { code, message } = error as { code?: unknown; message?: unknown };
    return {
      code: typeof code === 'string' ? code : null,
      message: typeof message === 'string' && message ? message : String(error),
    };
  }
  return { code: null, message: String(error) };
}
