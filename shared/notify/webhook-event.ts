import { createHash, createHmac, createSecretKey, type KeyObject } from 'node:crypto';

/**
 * The webhook wire format (Standard Webhooks, https://www.standardwebhooks.com):
 * body `{ id, type, timestamp, site_id, data }`; headers `webhook-id`, `webhook-timestamp` (Unix seconds),
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, and the spec's `x-service-signature`
 * carrying the same value. Pure: no I/O.
 */
export interface WebhookEvent {
  id: string;
  type: string;
  timestamp: string;
  site_id: string | null;
  data: Record<string, unknown>;
}

/** Bodies stay under 20 KB (receivers and proxies commonly cap at 20-64 KB; Slack's own limit is tighter). */
export const MAX_EVENT_BYTES = 20_000;

/** The event's public id: a digest of the notification's internal id, so every retry and every dispatcher agrees. */
export function eventIdOf(notificationId: string): string {
  return `evt_${createHash('sha256').update(notificationId).digest('hex').slice(0, 32)}`;
}

/**
 * The JSON body. When the data would push it past MAX_EVENT_BYTES, long strings and arrays inside `data`
 * are cut (arrays to their first items, strings to 500 characters) and `data.truncated: true` says so;
 * if that is still too large only the scalar fields of `data` are kept.
 */
export function eventBody(e: WebhookEvent): string {
  const full = JSON.stringify(e);
  if (Buffer.byteLength(full) <= MAX_EVENT_BYTES) return full;
  const shrunk = JSON.stringify({ ...e, data: { ...(shrink(e.data, 0) as Record<string, unknown>), truncated: true } });
  if (Buffer.byteLength(shrunk) <= MAX_EVENT_BYTES) return shrunk;
  const scalars = Object.fromEntries(
    Object.entries(e.data)
      .filter(([, v]) => v === null || typeof v !== 'object')
      .map(([k, v]) => [k, typeof v === 'string' ? v.slice(0, 500) : v]),
  );
  return JSON.stringify({ ...e, data: { ...scalars, truncated: true } });
}

function shrink(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return v.length > 500 ? `${v.slice(0, 500)}…` : v;
  if (Array.isArray(v)) return v.slice(0, 10).map((x) => shrink(x, depth + 1));
  if (v && typeof v === 'object') {
    if (depth > 4) return '[nested]';
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shrink(x, depth + 1)]));
  }
  return v;
}

/**
 * The HMAC key of a signing secret: a `whsec_<base64>` secret (what Friction generates) signs with the decoded
 * bytes, as Standard Webhooks libraries expect; any other secret (one a user chose) signs with its UTF-8 bytes
 * (verify with `new Webhook(Buffer.from(secret), { format: 'raw' })`). A KeyObject, made once per secret: Node 24's
 * createHmac tells a Buffer key from a KeyObject by catching a thrown brand check, which cost more than the HMAC
 * itself on every delivery (alerts bench profile).
 */
export function signingKey(secret: string): KeyObject {
  const m = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret);
  if (m && m[1]!.length % 4 === 0) return createSecretKey(Buffer.from(m[1]!, 'base64'));
  return createSecretKey(Buffer.from(secret, 'utf8'));
}

/** `v1,<base64>` over `id.timestamp.body`; `key` is a secret or its signingKey(). */
export function signature(key: KeyObject | string, id: string, timestampSec: number, body: string): string {
  return `v1,${createHmac('sha256', typeof key === 'string' ? signingKey(key) : key)
    .update(`${id}.${timestampSec}.${body}`)
    .digest('base64')}`;
}

/**
 * Every header of one signed delivery attempt (the timestamp is the attempt's, so a retry is signed afresh); `key`
 * is a secret or its signingKey() (a sender of many deliveries makes it once).
 */
export function signedHeaders(
  key: KeyObject | string,
  id: string,
  timestampSec: number,
  body: string,
): Record<string, string> {
  const sig = signature(key, id, timestampSec, body);
  return {
    'content-type': 'application/json',
    'user-agent': 'Friction-Webhooks/1',
    'webhook-id': id,
    'webhook-timestamp': String(timestampSec),
    'webhook-signature': sig,
    'x-service-signature': sig,
  };
}
