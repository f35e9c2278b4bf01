import type { z } from 'zod';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** JSON-encodes a message for the stream. */
export function encode(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

/** Decodes and validates a stream message; a failure is a poison message, never retried. */
export function safeDecode<T>(
  schema: z.ZodType<T>,
  bytes: Uint8Array,
): { ok: true; value: T } | { ok: false; error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(decoder.decode(bytes));
  } catch (err) {
    return { ok: false, error: `not JSON: ${(err as Error).message}` };
  }
  const r = schema.safeParse(raw);
  return r.success
    ? { ok: true, value: r.data }
    : { ok: false, error: r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') };
}
