import { createServer, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { type BlockList, isIP } from 'node:net';
import type { Logger } from '../logger.ts';
import type { Config } from '../config.ts';
import { plainAddress, trustedProxyList } from './client-address.ts';
import { counter } from './metrics.ts';

/** What bounds a role's connections (CONNECTION_* and MAX_CONNECTIONS* settings). */
export interface ConnectionLimits {
  /** A connection that has not completed its request headers within this is closed (nginx: 60 s). */
  headersTimeoutMs: number;
  /** A whole request (headers and body) must arrive within this. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection between requests is closed after this. */
  keepAliveTimeoutMs: number;
  /** Open connections the process accepts at most; past it new ones are closed at once. 0: no cap. */
  maxConnections: number;
  /** Open connections one client address may hold; past it its new ones are closed at once. 0: no cap. */
  maxConnectionsPerIp: number;
  /** Peers the per-IP cap does not apply to (TRUSTED_PROXIES: a proxy carries many clients on its address). */
  exempt: BlockList | null;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 60_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 16_384,
  maxConnectionsPerIp: 256,
  exempt: null,
};

/** The limits a role serves with, from its configuration. */
export function connectionLimits(
  config: Pick<
    Config,
    | 'HTTP_HEADERS_TIMEOUT_MS'
    | 'HTTP_REQUEST_TIMEOUT_MS'
    | 'HTTP_KEEP_ALIVE_TIMEOUT_MS'
    | 'MAX_CONNECTIONS'
    | 'MAX_CONNECTIONS_PER_IP'
    | 'TRUSTED_PROXIES'
  >,
): ConnectionLimits {
  return {
    headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: config.MAX_CONNECTIONS,
    maxConnectionsPerIp: config.MAX_CONNECTIONS_PER_IP,
    exempt: trustedProxyList(config.TRUSTED_PROXIES),
  };
}

export const refusedConnections = counter(
  'friction_http_connections_refused_total',
  "Connections closed on arrival: the process cap (max_connections) or one address's cap (per_ip)",
  ['role', 'reason'],
);

/**
 * Bounds what idle or slow clients can hold: timeouts for a connection that never finishes its headers (a socket
 * that sends nothing counts from its accept: Node's headersTimeout clock starts with the connection), a process
 * cap and a per-address cap, each refusal counted and logged (once a minute per reason, not per socket: a flood
 * would otherwise flood the log). Malformed requests Node's parser refuses are answered in the error envelope.
 */
export function createGuardedServer(
  listener: RequestListener,
  role: string,
  log: Logger,
  limits: ConnectionLimits,
): Server {
  // Node checks the header and request deadlines on this interval (default 30 s: a 60 s deadline could hold 90 s).
  const server = createServer(
    { connectionsCheckingInterval: Math.max(250, Math.min(5_000, limits.headersTimeoutMs / 4)) },
    listener,
  );
  // Node refuses a header deadline past the request deadline; the request deadline is the outer bound.
  server.headersTimeout = Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs);
  server.requestTimeout = limits.requestTimeoutMs;
  // Keep-alive longer than typical load balancers' idle timeout, so they close first (no reset races).
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections;
  const lastLogged = new Map<string, number>();
  const refuse = (reason: 'max_connections' | 'per_ip', peer: string) => {
    refusedConnections.inc({ role, reason });
    const now = Date.now();
    if (now - (lastLogged.get(reason) ?? 0) < 60_000) return;
    lastLogged.set(reason, now);
    log.warn(
      { reason, peer, max_connections: limits.maxConnections, max_connections_per_ip: limits.maxConnectionsPerIp },
      reason === 'per_ip'
        ? 'connection refused: this address holds the most connections one address may (MAX_CONNECTIONS_PER_IP)'
        : 'connection refused: the process holds MAX_CONNECTIONS connections',
    );
  };
  // Node closes connections past maxConnections itself and emits 'drop' (since 18.6).
  server.on('drop', (d?: { remoteAddress?: string }) => refuse('max_connections', d?.remoteAddress ?? ''));
  if (limits.maxConnectionsPerIp > 0) {
    const open = new Map<string, number>();
    server.on('connection', (socket: Socket) => {
      const peer = plainAddress(socket.remoteAddress ?? '');
      const v = isIP(peer);
      if (limits.exempt && v !== 0 && limits.exempt.check(peer, v === 4 ? 'ipv4' : 'ipv6')) return;
      const n = open.get(peer) ?? 0;
      if (n >= limits.maxConnectionsPerIp) {
        refuse('per_ip', peer);
        socket.destroy();
        return;
      }
      open.set(peer, n + 1);
      socket.once('close', () => {
        const left = (open.get(peer) ?? 1) - 1;
        if (left <= 0) open.delete(peer);
        else open.set(peer, left);
      });
    });
  }
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => answerClientError(err, socket));
  return server;
}

/**
 * Node's parser refused the request (unknown method, header too large, bad framing, headers timeout): answer in
 * the envelope where the socket can still take an answer, then close. Node's default writes an empty-bodied 400.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  // ECONNRESET: the client went away; nothing to answer. A socket already answering cannot take another head.
  // A connection that never sent a byte and timed out is just closed (as nginx does): there is no request to answer.
  if (
    err.code === 'ECONNRESET' ||
    (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.bytesRead === 0) ||
    !socket.writable ||
    (socket as Socket & { _httpMessage?: unknown })._httpMessage
  ) {
    socket.destroy();
    return;
  }
  const [status, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'header_too_large', 'request header fields are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'request_timeout', 'the request did not arrive in time']
        : [400, 'invalid_input', `malformed HTTP request (${err.code ?? 'parse error'})`];
  const body = JSON.stringify({ data: null, error: { code, message, status } });
  const reason =
    status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  socket.destroySoon?.();
}
