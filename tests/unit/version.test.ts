// The version is written once, in package.json: the host's environment and the MCP server's
// serverInfo both report it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serverInfo } from '../../src/main/agent/mcp/mcp-server.js';
import { tandemVersion } from '../../src/main/version.js';

const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };

describe('the version', () => {
  it("is package.json's, in the host and in the MCP serverInfo", () => {
    expect(tandemVersion).toBe(pkg.version);
    expect(serverInfo.version).toBe(pkg.version);
  });

  it('is written in no source file', () => {
    for (const file of ['src/main/host/host.ts', 'src/main/agent/mcp/mcp-server.ts']) {
      expect(readFileSync(join(import.meta.dirname, '..', '..', file), 'utf8')).not.toContain(`'${pkg.version}'`);
    }
  });
});
