/** What a confined terminal's proxy refuses (src/main/sandbox/proxy-policy.ts): every spelling of this machine. */
import { describe, expect, it } from 'vitest';
import { addressRefusal, canonicalAddress, domainAllowed } from '../../src/main/sandbox/proxy-policy.js';

const own = new Set(['192.0.2.2', canonicalAddress('2001:db8::2')]);

describe('proxy address policy', () => {
  it('refuses loopback, unspecified, link-local, multicast and the machine’s own addresses in every spelling', () => {
    const cases: Array<[string, string]> = [
      ['127.0.0.1', 'loopback'],
      ['127.255.0.9', 'loopback'],
      ['::1', 'loopback'],
      ['0:0:0:0:0:0:0:1', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['::127.0.0.1', 'loopback'],
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['::ffff:0.0.0.0', 'unspecified'],
      ['169.254.169.254', 'link-local'],
      ['fe80::1%eth0', 'link-local'],
      ['fd00:ec2::254', 'link-local'],
      ['224.0.0.1', 'multicast'],
      ['255.255.255.255', 'multicast'],
      ['ff02::1', 'multicast'],
      ['192.0.2.2', 'own-address'],
      ['::ffff:192.0.2.2', 'own-address'],
      ['2001:db8:0::2', 'own-address'],
    ];
    for (const [address, reason] of cases) expect(addressRefusal(address, own), address).toBe(reason);
  });

  it('lets other hosts through, the local network included', () => {
    for (const address of ['93.184.215.14', '192.0.2.3', '10.0.0.5', '2606:4700::1111', '::ffff:93.184.215.14'])
      expect(addressRefusal(address, own), address).toBeNull();
  });

  it('matches the domain list by whole names; `*.` means subdomains only', () => {
    const list = ['registry.npmjs.org', '*.pypi.org'];
    expect(domainAllowed('anything.example', [])).toBe(true);
    expect(domainAllowed('Registry.NPMJS.org.', list)).toBe(true);
    expect(domainAllowed('files.pypi.org', list)).toBe(true);
    for (const host of ['pypi.org', 'evilpypi.org', 'registry.npmjs.org.evil.example', 'npmjs.org', '127.0.0.1', '[::1]'])
      expect(domainAllowed(host, list), host).toBe(false);
  });
});
