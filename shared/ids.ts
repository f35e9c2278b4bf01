import { hash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/** A random v4 uuid. */
export const newId = (): string => randomUUID();

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `bytes` of CSPRNG output in base62 (unbiased: rejection sampling). */
export function randomToken(length = 32): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

export const KEY_PREFIXES = { publishable: 'svc_pub_', secret: 'svc_sec_', mcp: 'svc_mcp_' } as const;
export type KeyType = keyof typeof KEY_PREFIXES;

/** A new API key of the given type: prefix + 32 base62 characters (~190 bits). Shown once. */
export function newApiKey(type: KeyType): string {
  return KEY_PREFIXES[type] + randomToken(32);
}

/** Keys are stored only as this hash. Keys are long random tokens, so a fast hash suffices (no dictionary to attack). */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** Constant-time comparison of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}

/** The key type a key's prefix declares, or null for anything else. */
export function keyTypeOf(key: string): KeyType | null {
  for (const [type, prefix] of Object.entries(KEY_PREFIXES)) if (key.startsWith(prefix)) return type as KeyType;
  return null;
}

/** A uuid-shaped id derived from content, so the same content always yields the same id. */
export function deterministicId(...parts: string[]): string {
  const h = hash('sha256', parts.join('\u0000'), 'hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
