import { describe, expect, it } from 'vitest';
import { checkSandboxChange, effectiveSandbox, pairingSandbox, platformDefaultMode, sandboxRequest } from '../../src/main/sandbox/agent-sandbox.js';
import { assertSandboxAvailable } from '../../src/main/sandbox/availability.js';

const ctx = { fallback: 'workspace-write' as const, agent: 'a', stateDir: '/s', discoveryDir: '/d' };

describe('agent sandbox settings', () => {
  it('defaults new pairings to workspace-write with the network on, Windows to off', () => {
    expect(platformDefaultMode('linux')).toBe('workspace-write');
    expect(platformDefaultMode('darwin')).toBe('workspace-write');
    expect(platformDefaultMode('win32')).toBe('off');
    expect(effectiveSandbox({}, 'workspace-write')).toEqual({ sandbox: 'workspace-write', network: true });
    expect(effectiveSandbox({ sandbox: 'read-only', network: false }, 'workspace-write')).toEqual({ sandbox: 'read-only', network: false });
  });

  it('asks for confinement unless off', () => {
    expect(sandboxRequest({ sandbox: 'off' }, ctx)).toBeUndefined();
    expect(sandboxRequest({ network: false }, ctx)).toEqual({ mode: 'workspace-write', network: false, agent: 'a', stateDir: '/s', discoveryDir: '/d' });
  });

  it('refuses a change while terminals are open or opening, allows the same settings', () => {
    const now = { mode: 'workspace-write' as const, network: true };
    expect(() => checkSandboxChange(now, { mode: 'off', network: true }, 1, 'linux')).toThrow(expect.objectContaining({ code: 'busy' }));
    expect(() => checkSandboxChange(now, { mode: 'workspace-write', network: false }, 2, 'linux')).toThrow(expect.objectContaining({ code: 'busy' }));
    expect(() => checkSandboxChange(now, now, 3, 'linux')).not.toThrow();
    expect(() => checkSandboxChange(now, { mode: 'read-only', network: true }, 0, 'linux')).not.toThrow();
  });

  it('keeps Windows off: no confined setting, no confined open', () => {
    expect(() => checkSandboxChange({ mode: 'off', network: true }, { mode: 'read-only', network: true }, 0, 'win32')).toThrow(
      expect.objectContaining({ code: 'sandbox_unavailable' }),
    );
    expect(() => assertSandboxAvailable(true, 'win32')).toThrow(
      expect.objectContaining({ code: 'sandbox_unavailable', message: expect.stringMatching(/Windows.*off/) }),
    );
  });
});

describe('the sandbox a new pairing is stored with', () => {
  it('is the person’s default, a fixed one when the layer has it, and off on Windows whatever is chosen', () => {
    const chosen = { newAgentSandbox: 'read-only', newAgentNetwork: false } as const;
    expect(pairingSandbox(chosen, undefined, 'linux')).toEqual({ sandbox: 'read-only', network: false });
    expect(pairingSandbox(chosen, 'off', 'darwin')).toEqual({ sandbox: 'off', network: false });
    expect(pairingSandbox({ newAgentSandbox: 'workspace-write', newAgentNetwork: true }, undefined, 'win32')).toEqual({ sandbox: 'off', network: true });
  });
});
