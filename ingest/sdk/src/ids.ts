/**
 * A v4 uuid: the service dedups events on it and batches on batch_id. Built on getRandomValues,
 * which (unlike crypto.randomUUID) also exists on plain-http pages.
 */
export const uuid = (): string =>
  '10000000-1000-4000-8000-100000000000'.replace(/[018]/g, (c) =>
    (+c ^ (crypto.getRandomValues(new Uint8Array(1))[0] & (15 >> (+c / 4)))).toString(16),
  );

/**
 * Whether a session is in the sample: its id's first 32 bits (uniformly random in a v4 uuid) read
 * as a fraction. Deterministic in the session id, so a session is never half-recorded.
 */
export const inSample = (sessionId: string, rate: number): boolean =>
  rate >= 1 || parseInt(sessionId.slice(0, 8), 16) / 2 ** 32 < rate;
