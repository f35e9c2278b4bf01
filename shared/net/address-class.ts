import { isIPv4, isIPv6 } from 'node:net';

/**
 * What kind of network an IP address belongs to, for the outbound guard. Pure: no DNS, no I/O.
 * IPv6 forms that embed an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64
 * `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the IPv4 address they reach, so `::ffff:127.0.0.1` is loopback.
 */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'unique_local'
  | 'multicast'
  | 'metadata'
  | 'unspecified'
  | 'reserved'
  | 'invalid';

/** Cloud instance-metadata services: refused always, whatever the operator allows (they hand out credentials). */
const METADATA_V4 = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', '192.0.0.192']);
const METADATA_V6 = new Set(['fd00:ec2:0:0:0:0:0:254']);

/** IPv4 ranges in order of precedence: [network, prefix length, class]. */
const V4_RANGES: readonly [string, number, AddressClass][] = [
  ['0.0.0.0', 8, 'unspecified'], // "this network": 0.0.0.0 connects to the local host on Linux
  ['127.0.0.0', 8, 'loopback'],
  ['10.0.0.0', 8, 'private'],
  ['172.16.0.0', 12, 'private'],
  ['192.168.0.0', 16, 'private'],
  ['100.64.0.0', 10, 'private'], // carrier-grade NAT, private to a provider's network
  ['169.254.0.0', 16, 'link_local'],
  ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments
  ['192.0.2.0', 24, 'reserved'], // documentation
  ['198.18.0.0', 15, 'reserved'], // benchmarking
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // includes 255.255.255.255 broadcast
];

function v4ToInt(a: string): number {
  const p = a.split('.').map(Number);
  return ((p[0]! << 24) | (p[1]! << 16) | (p[2]! << 8) | p[3]!) >>> 0;
}

const V4_COMPILED = V4_RANGES.map(([net, len, cls]) => {
  const mask = len === 0 ? 0 : (~0 << (32 - len)) >>> 0;
  return { base: (v4ToInt(net) & mask) >>> 0, mask, cls };
});

/** The metadata addresses as integers (every outbound request is classified: no string building per call). */
const METADATA_V4_INT = new Set([...METADATA_V4].map(v4ToInt));

function classifyV4Int(n: number): AddressClass {
  if (METADATA_V4_INT.has(n)) return 'metadata';
  for (const r of V4_COMPILED) if ((n & r.mask) >>> 0 === r.base) return r.cls;
  return 'public';
}

/** Eight 16-bit groups of an IPv6 address (accepts `::` and a trailing dotted IPv4; drops a `%zone`). */
function v6Groups(a: string): number[] | undefined {
  let s = a.toLowerCase();
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!isIPv6(s)) return undefined;
  const lastColon = s.lastIndexOf(':');
  const last = s.slice(lastColon + 1);
  if (last.includes('.')) {
    // A trailing dotted IPv4 is two groups: rewrite it as such, then parse one way.
    const n = v4ToInt(last);
    s = `${s.slice(0, lastColon + 1)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const parse = (x: string) => (x === '' ? [] : x.split(':').map((g) => parseInt(g, 16)));
  if (!s.includes('::')) {
    const all = parse(s);
    return all.length === 8 ? all : undefined;
  }
  const [head, rest] = s.split('::') as [string, string];
  const h = parse(head);
  const r = parse(rest);
  const zeros = 8 - h.length - r.length;
  if (zeros < 0) return undefined;
  return [...h, ...Array<number>(zeros).fill(0), ...r];
}

function classifyV6(g: number[]): AddressClass {
  const key = g.map((x) => x.toString(16)).join(':');
  if (METADATA_V6.has(key)) return 'metadata';
  const embedded = (hi: number, lo: number) => classifyV4Int(((hi << 16) | lo) >>> 0);
  const firstSixZero = g.slice(0, 5).every((x) => x === 0);
  if (firstSixZero && g[5] === 0xffff) return embedded(g[6]!, g[7]!); // IPv4-mapped
  if (firstSixZero && g[5] === 0) {
    if (g[6] === 0 && g[7] === 0) return 'unspecified';
    if (g[6] === 0 && g[7] === 1) return 'loopback';
    return embedded(g[6]!, g[7]!); // IPv4-compatible (deprecated, still routed by some stacks)
  }
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return embedded(g[6]!, g[7]!); // NAT64
  if (g[0] === 0x2002) return embedded(g[1]!, g[2]!); // 6to4
  const top = g[0]!;
  if ((top & 0xff00) === 0xff00) return 'multicast';
  if ((top & 0xffc0) === 0xfe80) return 'link_local';
  if ((top & 0xffc0) === 0xfec0) return 'private'; // deprecated site-local
  if ((top & 0xfe00) === 0xfc00) return 'unique_local';
  if (top === 0x2001 && g[1] === 0x0db8) return 'reserved'; // documentation
  if (top === 0x0100 && g.slice(1, 4).every((x) => x === 0)) return 'reserved'; // discard prefix
  return 'public';
}

/** The class of a literal IP address (`[::1]` brackets allowed); `invalid` when it is not one. */
export function classifyAddress(address: string): AddressClass {
  const a = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIPv4(a)) return classifyV4Int(v4ToInt(a));
  const g = v6Groups(a);
  return g ? classifyV6(g) : 'invalid';
}

/**
 * Whether an outbound connection may reach an address of this class. Public addresses always; loopback and
 * private networks (including IPv6 unique-local) only when the operator allows them (self-hosting, tests);
 * metadata, link-local, multicast, unspecified and reserved addresses never.
 */
export function mayConnect(cls: AddressClass, allowPrivateNetworks: boolean): boolean {
  if (cls === 'public') return true;
  if (allowPrivateNetworks) return cls === 'loopback' || cls === 'private' || cls === 'unique_local';
  return false;
}

/** Plain words for an error message. */
export const CLASS_WORDS: Record<AddressClass, string> = {
  public: 'a public address',
  loopback: 'a loopback address',
  private: 'a private-network address',
  link_local: 'a link-local address',
  unique_local: 'a unique-local (private) IPv6 address',
  multicast: 'a multicast address',
  metadata: 'a cloud metadata address',
  unspecified: 'an unspecified address',
  reserved: 'a reserved address',
  invalid: 'not an IP address',
};
