/**
 * A stand-in for POST /v1/ingest that answers exactly like the real endpoint (202 envelope, CORS
 * preflight, JSON and text/plain beacons, 400/401/413, scripted 429/503 with Retry-After) and keeps
 * everything it received, so browser tests can assert on what the SDK actually sent.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { IngestBatchSchema, MAX_INGEST_BODY_BYTES, type IngestBatch } from '../../../shared/contracts/ingest.ts';

/** One POST as received. */
export interface Received {
  at: number;
  key: string | null;
  contentType: string;
  /** Authorization header was used (fetch) rather than the body key (beacon). */
  viaHeader: boolean;
  status: number;
  raw: unknown;
  /** Present when the body passed IngestBatchSchema. */
  batch?: IngestBatch;
}

export interface Invalid {
  at: number;
  key: string | null;
  issues: string;
  raw: unknown;
}

export interface Fault {
  /** HTTP status to answer with; 0 drops the connection instead (a network failure for the client). */
  status: number;
  retryAfter?: string;
}

export interface Capture {
  url: string;
  received: Received[];
  invalid: Invalid[];
  preflights: number;
  /** Batches that were accepted (2xx) for a key, in arrival order. */
  accepted(key: string): IngestBatch[];
  /** Every accepted event for a key, deduplicated by event id like the service does. */
  events(key: string): IngestBatch['events'];
  /** The next requests for `key` get these answers, in order, instead of 202. */
  fail(key: string, ...faults: Fault[]): void;
  /** Resolves once `check` passes on a received request; rejects with what arrived after `ms`. */
  waitFor(check: () => boolean, ms: number, what: string): Promise<void>;
  close(): Promise<void>;
}

function envelopeError(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  details?: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify({ data: null, error: { code, message, status, ...(details ? { details } : {}) } }));
}

async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_INGEST_BODY_BYTES) return null;
    chunks.push(c as Buffer);
  }
  const body = Buffer.concat(chunks);
  return req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
}

export async function startCapture(): Promise<Capture> {
  const received: Received[] = [];
  const invalid: Invalid[] = [];
  const faults = new Map<string, Fault[]>();
  const seenEvents = new Set<string>();
  const seenBatches = new Set<string>();
  const waiters = new Set<() => void>();
  const state = { preflights: 0 };

  const server = createServer((req, res) => {
    // Ingest allows any site origin; the publishable key, not the origin, is the credential.
    res.setHeader('Access-Control-Allow-Origin', req.headers.origin || '*');
    res.setHeader('Vary', 'Origin');
    res.setHeader('Access-Control-Expose-Headers', 'Retry-After');
    if (req.method === 'OPTIONS') {
      state.preflights++;
      res.writeHead(204, {
        'Access-Control-Allow-Methods': 'POST, OPTIONS',
        'Access-Control-Allow-Headers': 'Authorization, Content-Type, Content-Encoding',
        'Access-Control-Max-Age': '600',
      });
      res.end();
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/ingest') {
      envelopeError(res, 404, 'not_found', 'route not found');
      return;
    }
    void handle(req, res).finally(() => {
      for (const w of waiters) w();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = Date.now();
    const contentType = String(req.headers['content-type'] || '');
    const auth = /^Bearer (\S+)$/.exec(String(req.headers.authorization || ''));
    const record = (r: Omit<Received, 'at' | 'contentType' | 'viaHeader'>): void => {
      received.push({ at, contentType, viaHeader: !!auth, ...r });
    };
    const body = await readBody(req);
    if (!body) {
      record({ key: null, status: 413, raw: null });
      envelopeError(res, 413, 'payload_too_large', 'body over 1 MiB');
      return;
    }
    let raw: unknown;
    try {
      if (!/^(application\/json|text\/plain)\b/.test(contentType)) throw new Error('content type');
      raw = JSON.parse(body.toString('utf8'));
    } catch {
      record({ key: null, status: 400, raw: body.toString('utf8') });
      envelopeError(res, 400, 'invalid_input', 'body must be JSON (application/json or text/plain)');
      return;
    }
    const bodyKey = raw && typeof raw === 'object' ? (raw as { key?: unknown }).key : undefined;
    const key = auth ? auth[1] : typeof bodyKey === 'string' ? bodyKey : null;
    if (!key || !key.startsWith('svc_pub_')) {
      record({ key, status: 401, raw });
      envelopeError(res, 401, 'unauthorized', 'a publishable key is required');
      return;
    }
    const parsed = IngestBatchSchema.safeParse(raw);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      invalid.push({ at, key, issues, raw });
      record({ key, status: 400, raw });
      envelopeError(res, 400, 'invalid_input', issues, parsed.error.issues);
      return;
    }
    const fault = faults.get(key)?.shift();
    if (fault && fault.status === 0) {
      record({ key, status: 0, raw, batch: parsed.data });
      // A garbage status line: the browser reports a network error. (Just closing the socket is not
      // enough: Chromium silently resends a request whose reused connection was reset.)
      req.socket.end('HTTP/1.1 ???\r\n\r\n');
      return;
    }
    if (fault) {
      record({ key, status: fault.status, raw, batch: parsed.data });
      envelopeError(
        res,
        fault.status,
        fault.status === 429 ? 'rate_limited' : 'unavailable',
        'scripted fault',
        undefined,
        fault.retryAfter ? { 'Retry-After': fault.retryAfter } : {},
      );
      return;
    }
    let accepted = 0;
    let duplicates = 0;
    const batchId = parsed.data.batch_id;
    if (batchId && seenBatches.has(batchId)) duplicates = parsed.data.events.length;
    else {
      if (batchId) seenBatches.add(batchId);
      for (const e of parsed.data.events) {
        if (seenEvents.has(e.id)) duplicates++;
        else {
          seenEvents.add(e.id);
          accepted++;
        }
      }
    }
    record({ key, status: 202, raw, batch: parsed.data });
    res.writeHead(202, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ data: { accepted, duplicates }, error: null }));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const accepted = (key: string): IngestBatch[] =>
    received.filter((r) => r.key === key && r.status === 202 && r.batch).map((r) => r.batch!);

  return {
    url: `http://127.0.0.1:${port}`,
    received,
    invalid,
    get preflights() {
      return state.preflights;
    },
    accepted,
    events(key) {
      const seen = new Set<string>();
      return accepted(key)
        .flatMap((b) => b.events)
        .filter((e) => !seen.has(e.id) && !!seen.add(e.id));
    },
    fail(key, ...f) {
      faults.set(key, [...(faults.get(key) || []), ...f]);
    },
    waitFor(check, ms, what) {
      return new Promise<void>((resolve, reject) => {
        const poll = (): void => {
          if (!check()) return;
          clearTimeout(timer);
          waiters.delete(poll);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(poll);
          reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
        }, ms);
        waiters.add(poll);
        poll();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
