/**
 * What the proxy of a confined terminal lets through (issue 24), pure: an address the name
 * resolved to (or the literal the agent gave) is refused when it reaches this machine
 * (loopback, unspecified, its own interfaces' addresses) or its link (link-local, where cloud
 * metadata services live), and a host outside the agent's domain list is refused when the
 * list is not empty. The check is on the resolved address and the proxy connects to that very
 * address, so a name that resolves to 127.0.0.1 (DNS rebinding, `localhost`, `127.1`) gets no
 * second lookup that could differ.
 */
import { isIP } from 'node:net';

export type RefusalReason = 'loopback' | 'unspecified' | 'link-local' | 'multicast' | 'own-address' | 'domain' | 'capacity' | 'malformed' | 'unsupported';

/** The host as the allow list and the resolver take it: lower case, no trailing dot, no brackets. */
export function normalizeHost(host: string): string {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return bare.toLowerCase().replace(/\.$/, '');
}

/** Whether `host` may be reached under `domains` (empty: any public host). */
export function domainAllowed(host: string, domains: readonly string[]): boolean {
  if (domains.length === 0) return true;
  const name = normalizeHost(host);
  return domains.some((entry) => {
    const want = entry.toLowerCase();
    return want.startsWith('*.') ? name.endsWith(want.slice(1)) && name.length > want.length - 1 : name === want;
  });
}

/** Eight 16-bit groups of an IPv6 address (an embedded IPv4 tail included), or null. */
function ipv6Groups(address: string): number[] | null {
  let text = address.split('%')[0]!;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const octets = v4[1]!.split('.').map(Number);
    text = `${text.slice(0, -v4[1]!.length)}${((octets[0]! << 8) | octets[1]!).toString(16)}:${((octets[2]! << 8) | octets[3]!).toString(16)}`;
  }
  const [head, tail, extra] = text.split('::');
  if (extra !== undefined) return null;
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const groups = tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/** The canonical text of an address (IPv4 dotted, IPv6 as eight lower-case groups), for comparing. */
export function canonicalAddress(address: string): string {
  if (isIP(address) === 4) return address.split('.').map(Number).join('.');
  const groups = ipv6Groups(address);
  if (!groups) return address.toLowerCase();
  // An IPv4 address written as IPv6 (mapped ::ffff:a.b.c.d, or compatible ::a.b.c.d) is that IPv4 address.
  if (groups.slice(0, 5).every((g) => g === 0) && (groups[5] === 0xffff || (groups[5] === 0 && (groups[6]! > 0 || groups[7]! > 1)))) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return groups.map((g) => g.toString(16)).join(':');
}

/** Why the proxy must not connect to `address`, or null. `own`: this machine's addresses, canonical. */
export function addressRefusal(address: string, own: ReadonlySet<string>): RefusalReason | null {
  const canonical = canonicalAddress(address);
  if (isIP(canonical) === 4) {
    const [a, b] = canonical.split('.').map(Number) as [number, number];
    if (a === 127) return 'loopback';
    // 0.0.0.0/8 is "this host": a connect to 0.0.0.0 reaches the machine's own listeners.
    if (a === 0) return 'unspecified';
    if (a === 169 && b === 254) return 'link-local';
    if (a >= 224) return 'multicast';
    return own.has(canonical) ? 'own-address' : null;
  }
  const groups = ipv6Groups(canonical);
  if (!groups) return 'malformed';
  if (groups.every((g) => g === 0)) return 'unspecified';
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1) return 'loopback';
  if ((groups[0]! & 0xffc0) === 0xfe80) return 'link-local';
  if ((groups[0]! & 0xff00) === 0xff00) return 'multicast';
  // AWS's IPv6 instance metadata service (the IPv4 one, 169.254.169.254, is link-local above).
  if (canonical === 'fd00:ec2:0:0:0:0:0:254') return 'link-local';
  return own.has(canonical) ? 'own-address' : null;
}

const reasonText: Record<RefusalReason, string> = {
  loopback: 'a loopback address of this machine',
  unspecified: 'the unspecified address, which reaches this machine',
  'link-local': 'a link-local address (the local link, cloud metadata services)',
  multicast: 'a multicast or broadcast address',
  'own-address': 'an address of this machine',
  domain: '',
  capacity: '',
  malformed: '',
  unsupported: '',
};

/** The sentence a refused connection carries (the proxy's answer and the refusal record). */
export function refusalMessage(
  reason: RefusalReason,
  target: string,
  detail: { address?: string; domains?: readonly string[]; limit?: number; what?: string },
): string {
  const start = `Tandem's sandbox refused the connection to ${target}`;
  switch (reason) {
    case 'domain':
      return `${start}: it is not in this agent's network domain list (${(detail.domains ?? []).join(', ')}); the person can add it in the agents panel.`;
    case 'capacity':
      return `${start}: this agent has ${detail.limit ?? 0} connections open through the proxy, the most it may; close some and retry.`;
    case 'malformed':
    case 'unsupported':
      return `Tandem's sandbox proxy cannot serve this request: ${detail.what ?? 'it is malformed'}.`;
    default:
      return `${start}: ${detail.address ? `it resolves to ${detail.address}, ` : ''}${reasonText[reason]}; a confined terminal reaches only other hosts, through its proxy.`;
  }
}
