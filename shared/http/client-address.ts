import { BlockList, isIP } from 'node:net';
import type Koa from 'koa';
import { parseCidr } from '../config.ts';

/** The set of proxy addresses whose X-Forwarded-For is believed (TRUSTED_PROXIES). */
export function trustedProxyList(spec: string): BlockList | null {
  const entries = spec
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (entries.length === 0) return null;
  const list = new BlockList();
  for (const e of entries) {
    const c = parseCidr(e);
    if (!c) throw new Error(`TRUSTED_PROXIES: "${e}" is not an IP address or CIDR range`);
    list.addSubnet(c.address, c.prefix, c.family);
  }
  return list;
}

/** `::ffff:10.0.0.1` (an IPv4 peer on a dual-stack socket) → `10.0.0.1`. */
export function plainAddress(addr: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(addr);
  return m ? m[1] : addr;
}

function isTrusted(list: BlockList, addr: string): boolean {
  const v = isIP(addr);
  return v !== 0 && list.check(addr, v === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The client's address: the TCP peer, unless the peer is a trusted proxy; then X-Forwarded-For is walked from the
 * right (the entry the nearest proxy appended) past every trusted hop, and the first untrusted address is the
 * client. Entries left of it were written by the client itself and are never believed. With no trusted proxies the
 * header is ignored entirely (Koa's `app.proxy = true` would believe whatever the client sent).
 */
export function clientAddress(peer: string, forwardedFor: string | undefined, trusted: BlockList | null): string {
  let addr = plainAddress(peer);
  if (!trusted || !forwardedFor) return addr;
  const hops = forwardedFor
    .split(',')
    .map((h) => plainAddress(h.trim()))
    .filter(Boolean);
  while (isTrusted(trusted, addr) && hops.length > 0) {
    const next = hops.pop() as string;
    if (!isIP(next)) break; // a malformed entry ends the chain: the last trusted hop's peer stands
    addr = next;
  }
  return addr;
}

/** Sets `ctx.ip` (what the per-IP limits count against) from the peer and the trusted proxies. */
export function clientAddressMiddleware(trusted: BlockList | null): Koa.Middleware {
  return (ctx, next) => {
    ctx.request.ip = clientAddress(
      ctx.req.socket.remoteAddress ?? '',
      ctx.get('x-forwarded-for') || undefined,
      trusted,
    );
    return next();
  };
}
