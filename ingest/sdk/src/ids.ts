/**
 * A v4 uuid: the service dedups events on it and batches on batch_id. Built on getRandomValues,
 * which (unlike crypto.randomUUID) also exists on plain-http pages.
 */
export const uuid = (): string =>
  '10000000-1000-4000-8000-100000000000'.replace(/[018]/g, (c) =>
    (+c ^ (crypto.getRandomValues(new Uint8Array(1))[0] & (15 >> (+c / 4)))).toString(16),
  );

/** FNV-1a, 32 bit: a stable hash so sampling is decided once per session, the same on every page. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Whether a session is in the sample. Deterministic in the session id, so a session is never half-recorded. */
export function inSample(sessionId: string, rate: number): boolean {
  if (!(rate > 0)) return false;
  if (rate >= 1) return true;
  return hash32(sessionId) / 0x100000000 < rate;
}
