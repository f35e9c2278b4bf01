/**
 * Cache hints broadcast to every process (core NATS fan-out, not the stream): best effort, so each cache's TTL stays
 * the fallback for a hint that is lost or malformed.
 */

/** The part of the bus that carries hints (shared/bus/bus.ts). */
export interface HintBus {
  broadcast(subject: string, data: Uint8Array): Promise<void>;
  listen(subject: string, handler: (data: Uint8Array) => void): () => void;
}

/** Calls `apply` with each JSON object broadcast on `subject`; returns the unsubscribe function. */
export function listenForHints(
  bus: HintBus,
  subject: string,
  apply: (hint: Record<string, unknown>) => void,
): () => void {
  return bus.listen(subject, (data) => {
    try {
      const hint: unknown = JSON.parse(new TextDecoder().decode(data));
      if (hint !== null && typeof hint === 'object') apply(hint as Record<string, unknown>);
    } catch {
      /* a malformed hint changes nothing; the TTL still applies */
    }
  });
}

/** Sends `hint` to every process listening on `subject` now; a failed send is ignored (the TTL applies). */
export async function announceHint(bus: HintBus, subject: string, hint: object): Promise<void> {
  await bus.broadcast(subject, new TextEncoder().encode(JSON.stringify(hint))).catch(() => {});
}
