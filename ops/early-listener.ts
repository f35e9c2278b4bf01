import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { createGuardedServer, type ConnectionLimits } from '../shared/http/connection-guard.ts';
import type { Logger } from '../shared/logger.ts';

/**
 * The port opened before the slow start-up work (loading modules, opening the embedded database, migrating,
 * rebuilding the processor's state), so a port in use fails at once and a harness sees the process alive within
 * a second. Until the roles are ready every request but `/healthz` is answered 503 `unavailable` with
 * Retry-After in the envelope, never accepted and then lost: nothing is read or stored before the app takes over.
 */
export function listenEarly(
  port: number,
  host: string,
  role: string,
  log: Logger,
  limits: ConnectionLimits,
): Promise<{ server: Server; serve(app: RequestListener): void }> {
  // Guarded from the first accept: the same timeouts and caps the roles serve with (this server becomes theirs).
  const server = createGuardedServer(startingAnswer, role, log, limits);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve({
        server,
        serve(app) {
          server.off('request', startingAnswer);
          server.on('request', app);
        },
      });
    });
  });
}

function startingAnswer(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  const alive = path === '/healthz' && (req.method === 'GET' || req.method === 'HEAD');
  const body = alive
    ? { data: { status: 'starting' }, error: null }
    : {
        data: null,
        error: {
          code: 'unavailable',
          message: 'Friction is starting: retry in a moment',
          status: 503,
          details: { starting: true },
        },
      };
  res.writeHead(alive ? 200 : 503, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-request-id': randomUUID(),
    ...(alive ? {} : { 'retry-after': '1' }),
  });
  // The request body is drained, not read: nothing sent during start is kept.
  req.resume();
  res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
}
