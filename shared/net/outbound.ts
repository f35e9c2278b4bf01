import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { urlToHttpOptions } from 'node:url';
import { CLASS_WORDS, classifyAddress, mayConnect, type AddressClass } from './address-class.ts';

/**
 * The one guard every outbound call goes through (webhooks, Slack, PagerDuty, screenshots):
 * - http(s) only;
 * - the host is resolved ONCE and the connection is pinned to the address that was checked (the socket's
 *   `lookup` returns it), so a DNS answer that changes between check and connect (rebinding) reaches nothing new;
 * - loopback, private, link-local, unique-local, multicast, reserved and cloud-metadata addresses are refused;
 *   `allowPrivateNetworks` (OUTBOUND_ALLOW_PRIVATE_NETWORKS) admits loopback and private networks, never metadata;
 * - redirects are never followed (a 3xx is an answer like any other), and every call has a deadline.
 */
export interface OutboundPolicy {
  allowPrivateNetworks: boolean;
}

/** Why a URL or address was refused; `field`-free so each caller names its own field. */
export class OutboundRefusedError extends Error {
  readonly reason: string;
  constructor(reason: string) {
    super(reason);
    this.reason = reason;
  }
}

/** A failed outbound call (network, timeout, refused): the delivery log keeps `message`. */
export class OutboundError extends Error {
  readonly kind: 'refused' | 'timeout' | 'network' | 'dns';
  /** The checked address the call was made to, when it got that far (timeouts and network errors). */
  readonly address: string | undefined;
  constructor(kind: OutboundError['kind'], message: string, address?: string) {
    super(message);
    this.kind = kind;
    this.address = address;
  }
}

/** Names that resolve to this host whatever DNS says (RFC 6761). */
function isLocalName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

/** The URL parsed, or a refusal naming what is wrong. WHATWG parsing normalises `0x7f000001`, `2130706433`, `127.1`. */
function parseOutbound(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new OutboundRefusedError('is not a valid URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new OutboundRefusedError('must be an http or https URL');
  if (u.hostname === '') throw new OutboundRefusedError('has no host');
  return u;
}

function refusal(cls: AddressClass, address: string): string {
  return (
    `points to ${CLASS_WORDS[cls]} (${address}); outbound calls may reach only public addresses` +
    (cls === 'loopback' || cls === 'private' || cls === 'unique_local'
      ? ' unless OUTBOUND_ALLOW_PRIVATE_NETWORKS=true'
      : '')
  );
}

function checkAddress(address: string, policy: OutboundPolicy): void {
  const cls = classifyAddress(address);
  if (!mayConnect(cls, policy.allowPrivateNetworks)) throw new OutboundRefusedError(refusal(cls, address));
}

/** How long create-time resolution may take before the URL is accepted on its literal alone. */
const CREATE_TIME_DNS_TIMEOUT_MS = 2000;

/**
 * Create-time check (a clear 400 before anything is stored): the scheme, a literal address in any of its forms,
 * `localhost` names, and what the host resolves to right now. A host that does not resolve yet is accepted:
 * the delivery-time check (which resolves again and pins) is the real boundary, and a record may be created
 * before its DNS exists. Throws OutboundRefusedError.
 */
export async function checkOutboundUrl(
  raw: string,
  policy: OutboundPolicy,
  resolve: typeof resolveHost = resolveHost,
): Promise<void> {
  const u = parseOutbound(raw);
  const host = u.hostname;
  const literal = classifyAddress(host);
  if (literal !== 'invalid') return checkAddress(host, policy);
  if (isLocalName(host)) return checkAddress('127.0.0.1', policy);
  const addrs = await Promise.race([
    resolve(host).catch(() => [] as string[]),
    new Promise<string[]>((r) => setTimeout(() => r([]), CREATE_TIME_DNS_TIMEOUT_MS).unref()),
  ]);
  for (const a of addrs) checkAddress(a, policy);
}

/** Every address the system resolver gives for `host`. */
export async function resolveHost(host: string): Promise<string[]> {
  return (await dnsLookup(host, { all: true, verbatim: true })).map((r) => r.address);
}

/**
 * Resolves the URL's host once and checks EVERY address it gets (a name answering one public and one private
 * address is refused: the resolver may hand out either). Returns the address to pin.
 */
export async function pinnedAddress(
  u: URL,
  policy: OutboundPolicy,
  resolve: typeof resolveHost = resolveHost,
): Promise<{ address: string; family: 4 | 6 }> {
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  const literal = classifyAddress(host);
  return pin(u.host, host, literal === 'invalid' ? null : literal, policy, resolve);
}

/** pinnedAddress with the host's class known when it is an IP literal (null: a name, resolved now). */
async function pin(
  hostPort: string,
  host: string,
  literal: AddressClass | null,
  policy: OutboundPolicy,
  resolve: typeof resolveHost,
): Promise<{ address: string; family: 4 | 6 }> {
  if (literal !== null) {
    if (!mayConnect(literal, policy.allowPrivateNetworks))
      throw new OutboundError('refused', `${hostPort} ${refusal(literal, host)}`);
    return { address: host, family: host.includes(':') ? 6 : 4 };
  }
  let addrs: string[];
  if (isLocalName(host)) addrs = ['127.0.0.1'];
  else {
    try {
      addrs = await resolve(host);
    } catch (err) {
      throw new OutboundError('dns', `cannot resolve ${host}: ${(err as Error).message}`);
    }
    if (addrs.length === 0) throw new OutboundError('dns', `cannot resolve ${host}`);
  }
  try {
    for (const a of addrs) checkAddress(a, policy);
  } catch (err) {
    throw new OutboundError('refused', `${hostPort} ${(err as Error).message}`);
  }
  const address = addrs[0]!;
  return { address, family: address.includes(':') ? 6 : 4 };
}

/** What every request to one URL reuses: the parse, the host's class when it is an IP literal, the request options. */
interface Target {
  u: URL;
  host: string;
  literal: AddressClass | null;
  options: http.RequestOptions;
}
/**
 * Targets by URL string. A dispatcher sends to few URLs many times, and parsing one and building its options cost a
 * tenth of a local delivery's CPU (alerts bench profile). Only what the URL alone decides is kept: every request
 * still checks its class against the policy and resolves a name afresh. Bounded: cleared when full.
 */
const targets = new Map<string, Target>();
const MAX_TARGETS = 1000;

function targetOf(raw: string): Target {
  const hit = targets.get(raw);
  if (hit) return hit;
  const u = parseOutbound(raw);
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  const literal = classifyAddress(host);
  const t: Target = { u, host, literal: literal === 'invalid' ? null : literal, options: urlToHttpOptions(u) };
  if (targets.size >= MAX_TARGETS) targets.clear();
  targets.set(raw, t);
  return t;
}

export interface OutboundRequest {
  url: string;
  method?: 'POST' | 'GET';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Whole-call deadline (connect, send, first byte, body). */
  timeoutMs?: number;
  /** At most this much of the response body is kept (the rest is read and dropped). */
  maxResponseBytes?: number;
}

export interface OutboundResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** Connected to this address (the checked one). */
  address: string;
}

export const DEFAULT_OUTBOUND_TIMEOUT_MS = 10_000;

/**
 * One agent per scheme, without keep-alive: no connection is ever reused, so each request connects to the address
 * its own lookup pinned. (`agent: false` would do the same with a new agent per request, which cost about a tenth
 * of a local delivery's CPU in the alerts bench.)
 */
const AGENTS = {
  'http:': new http.Agent({ keepAlive: false }),
  'https:': new https.Agent({ keepAlive: false }),
} as const;

/**
 * One HTTP(S) request through the guard: resolve once, check, connect to the checked address (TLS still
 * verifies the certificate against the host name), no redirects, a deadline. Throws OutboundError.
 */
export async function outboundRequest(
  req: OutboundRequest,
  policy: OutboundPolicy,
  resolve: typeof resolveHost = resolveHost,
): Promise<OutboundResponse> {
  let target: Target;
  try {
    target = targetOf(req.url);
  } catch (err) {
    throw new OutboundError('refused', `url ${(err as Error).message}`);
  }
  const { u } = target;
  const timeoutMs = req.timeoutMs ?? DEFAULT_OUTBOUND_TIMEOUT_MS;
  const startedAt = performance.now();
  // The deadline covers resolution: a resolver that answers in 15 s must not let a 10 s send outlive its claim.
  const pinned = await withinDeadline(
    pin(u.host, target.host, target.literal, policy, resolve),
    timeoutMs,
    target.host,
  );
  // NOTE: the socket asks this lookup for the host; it can only ever answer the address checked above.
  const lookup: LookupFunction = (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all)
      (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
        { address: pinned.address, family: pinned.family },
      ]);
    else cb(null, pinned.address, pinned.family);
  };
  const tls = u.protocol === 'https:';
  const mod = tls ? https : http;
  const max = req.maxResponseBytes ?? 64 * 1024;
  return new Promise<OutboundResponse>((resolvePromise, reject) => {
    let timedOut = false;
    const fail = (err: Error) => {
      clearTimeout(deadline);
      reject(toOutboundError(err, timedOut, timeoutMs, pinned.address));
    };
    const r = mod.request(
      {
        ...target.options,
        method: req.method ?? 'POST',
        headers: req.headers,
        lookup,
        agent: AGENTS[tls ? 'https:' : 'http:'],
        family: pinned.family,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        res.on('data', (c: Buffer) => {
          if (kept < max) {
            chunks.push(c.subarray(0, max - kept));
            kept += Math.min(c.length, max - kept);
          }
        });
        res.on('end', () => {
          clearTimeout(deadline);
          resolvePromise({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
            address: pinned.address,
          });
        });
        res.on('error', fail);
      },
    );
    // NOTE: one timer for the whole call (resolution included) rather than an AbortSignal: the signal and the
    // listeners it adds cost a tenth of a local delivery's CPU (alerts bench profile); destroying the request
    // fails whatever part of it is under way.
    const deadline = setTimeout(
      () => {
        timedOut = true;
        r.destroy(new Error('deadline'));
      },
      Math.max(0, timeoutMs - (performance.now() - startedAt)),
    );
    r.on('error', fail);
    r.end(req.body);
  });
}

/** `work`, or a timeout OutboundError once `timeoutMs` passed (the work itself is left to finish and is ignored). */
function withinDeadline<T>(work: Promise<T>, timeoutMs: number, host: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new OutboundError('timeout', `no complete answer within ${timeoutMs} ms (resolving ${host})`)),
      timeoutMs,
    );
  });
  work.catch(() => {}); // a resolution failing after the deadline is not an unhandled rejection
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

function toOutboundError(err: Error, timedOut: boolean, timeoutMs: number, address: string): OutboundError {
  if (timedOut) return new OutboundError('timeout', `no complete answer within ${timeoutMs} ms`, address);
  return new OutboundError('network', err.message || (err as NodeJS.ErrnoException).code || 'network error', address);
}
