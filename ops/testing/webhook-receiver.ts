/** Test-only: an HTTP receiver on 127.0.0.1 that records every request and answers from a script. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** What the receiver answered. */
  status: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Resolves once `n` requests arrived (polls; fails after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(
  answer: (req: { path: string; body: string; index: number }) => {
    status: number;
    headers?: Record<string, string>;
    body?: string;
  },
): Promise<Receiver> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const a = answer({ path: req.url ?? '/', body, index: received.length });
      received.push({ path: req.url ?? '/', headers: req.headers, body, status: a.status });
      res.writeHead(a.status, a.headers);
      res.end(a.body ?? '');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    async waitFor(n, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      while (received.length < n) {
        if (Date.now() > until)
          throw new Error(`receiver got ${received.length} of ${n} requests within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return received;
    },
    close: () => new Promise<void>((r) => (server.close(() => r()), server.closeAllConnections())),
  };
}
