import http from 'node:http';
import net from 'node:net';
import { pipeline } from 'node:stream';
import { OutboundError, pinnedAddress, type OutboundPolicy } from '../../../shared/net/outbound.ts';

/**
 * The screenshot browser's only way out. Chromium is launched with `--proxy-server` pointing here (and
 * `--proxy-bypass-list=<-loopback>`, so loopback URLs come here too), and Playwright's `route` never sees redirects:
 * this proxy sees every hop instead (Chromium follows a redirect itself, sending the next URL through the proxy
 * again). Each hop's host is checked by the outbound guard and the connection is pinned to the checked address, so a
 * redirect, a sub-resource or a DNS answer that changed since cannot make Chromium reach a forbidden address.
 * - plain http: an absolute-URI request is forwarded to the pinned address; its answer (a 3xx included) is streamed back;
 * - CONNECT host:port (https, ws, wss): a raw tunnel to the pinned address; TLS stays end to end.
 * A refusal is a 403 carrying `x-friction-egress: refused`; the header is removed from upstream answers, so only
 * the proxy can set it.
 */
export const REFUSED_HEADER = 'x-friction-egress';

export interface EgressProxyOptions {
  policy: OutboundPolicy;
  /** Upper bound on an upstream connect and on any idle period of a forwarded exchange or tunnel. */
  timeoutMs: number;
  /** Told of every refused hop (the capturer classifies its capture with it, and logs it). */
  onRefused?: (url: string, reason: string) => void;
}

export interface EgressProxy {
  port: number;
  close(): Promise<void>;
}

/** Headers that describe one connection, not the message: never forwarded in either direction (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: http.IncomingHttpHeaders, drop?: string): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k) && k !== drop) out[k] = v;
  return out;
}

/**
 * The proxy's own 403. It has a body: Chromium fails a navigation whose error answer is empty
 * (ERR_HTTP_RESPONSE_CODE_FAILURE), and the capturer needs the response, marker included.
 */
function refusedAnswer(res: http.ServerResponse): void {
  res
    .writeHead(403, { [REFUSED_HEADER]: 'refused', 'content-type': 'text/plain' })
    .end('refused by the outbound guard\n');
}

/** The pinned address, or a refusal (the guard's message) / a failure to answer with 502. */
async function check(
  u: URL,
  policy: OutboundPolicy,
): Promise<{ address: string; family: 4 | 6 } | { refused: string } | { failed: string }> {
  try {
    return await pinnedAddress(u, policy);
  } catch (err) {
    if (err instanceof OutboundError && err.kind !== 'refused') return { failed: err.message };
    return { refused: (err as Error).message };
  }
}

export async function startEgressProxy(opts: EgressProxyOptions): Promise<EgressProxy> {
  const { policy, timeoutMs } = opts;
  const refuse = (url: string, reason: string) => opts.onRefused?.(url, reason);
  const sockets = new Set<net.Socket>();

  const server = http.createServer((req, res) => {
    let u: URL | undefined;
    try {
      u = new URL(req.url ?? '');
    } catch {
      /* origin-form: not a proxy request */
    }
    if (!u) return void res.writeHead(400).end();
    if (u.protocol !== 'http:') {
      refuse(u.href, 'only http is forwarded (https goes through CONNECT)');
      return void refusedAnswer(res);
    }
    const target = u;
    void check(target, policy).then((pin) => {
      if ('refused' in pin) {
        refuse(target.href, pin.refused);
        return void refusedAnswer(res);
      }
      if ('failed' in pin) return void res.writeHead(502).end();
      if (res.destroyed) return; // Chromium gave up while the host was resolved: connect nowhere
      const up = http.request(
        {
          host: pin.address,
          family: pin.family,
          port: target.port || 80,
          method: req.method,
          path: target.pathname + target.search,
          headers: { ...endToEnd(req.headers), host: target.host, via: '1.1 friction-egress' },
          agent: false,
          timeout: timeoutMs, // no reuse: each request connects to the address its own check pinned
        },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, endToEnd(upRes.headers, REFUSED_HEADER));
          pipeline(upRes, res, () => {}); // streams with backpressure; an error on either side destroys both
        },
      );
      up.on('timeout', () => up.destroy(new Error('upstream idle')));
      up.on('error', () => {
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      });
      // NOTE: `pipe`, not `pipeline`: an upstream error must leave the client's socket alive for the 502.
      req.pipe(up);
      res.on('close', () => {
        if (!res.writableFinished) up.destroy();
      }); // Chromium gave up: so does the upstream
    });
  });

  // A tunnel's sockets leave the HTTP server (closeAllConnections no longer sees them): tracked here for `close`.
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    let u: URL | undefined;
    try {
      u = new URL(`https://${req.url ?? ''}`);
    } catch {
      /* not host:port */
    }
    if (!u || u.pathname !== '/' || u.username !== '' || u.search !== '')
      return void client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    const target = u;
    void check(target, policy).then((pin) => {
      if ('refused' in pin) {
        refuse(`https://${target.host}`, pin.refused);
        return void client.end(`HTTP/1.1 403 Forbidden\r\n${REFUSED_HEADER}: refused\r\ncontent-length: 0\r\n\r\n`);
      }
      if ('failed' in pin) return void client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n');
      if (client.destroyed) return; // Chromium gave up while the host was resolved: connect nowhere
      const up = net.connect({ host: pin.address, family: pin.family, port: Number(target.port || 443) });
      sockets.add(up);
      up.on('close', () => sockets.delete(up));
      up.setTimeout(timeoutMs, () => {
        up.destroy();
        client.destroy();
      });
      client.setTimeout(timeoutMs, () => {
        up.destroy();
        client.destroy();
      });
      let connected = false;
      up.once('connect', () => {
        connected = true;
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) up.write(head);
        pipeline(client, up, client, () => {});
      });
      up.on('error', () => {
        if (!connected) client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n');
        else client.destroy();
      });
    });
  });
  server.on('clientError', (_err, s) => s.destroy());

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
