// What an MCP tool call returns when it throws: a TandemError keeps its contract code; anything
// else is Tandem's own failure and comes back as `internal`, never as the caller's
// `invalid_argument`.
import { describe, expect, it } from 'vitest';
import { toolError } from '../../src/main/agent/mcp/mcp-server.js';
import { errorSchema } from '../../src/shared/contract.js';
import { TandemError } from '../../src/shared/errors.js';

function errorOf(result: ReturnType<typeof toolError>): { code: string; message: string } {
  expect(result.isError).toBe(true);
  return (result.structuredContent as { error: { code: string; message: string } }).error;
}

describe('toolError', () => {
  it('keeps a TandemError code', () => {
    expect(errorOf(toolError(new TandemError('not_found', 'No terminal t1.')))).toEqual({ code: 'not_found', message: 'No terminal t1.' });
  });

  it('reports an unexpected throw as internal, naming what failed, in the contract shape', () => {
    for (const thrown of [new TypeError('x is undefined'), 'a string']) {
      const error = errorOf(toolError(thrown));
      expect(error.code).toBe('internal');
      expect(error.message).toContain(thrown instanceof Error ? thrown.message : thrown);
      expect(errorSchema.safeParse(error).success).toBe(true);
    }
  });
});
