import { randomUUID } from 'node:crypto';
import { sdkBatch } from '../testing/sdk-batch.ts';

/**
 * Steady SDK-shaped traffic: a batch of `events` events every `everyMs`, each one sent again, unchanged, until
 * ingest answers 202 (as the SDK does: after Retry-After, capped). Records every answer ingest gave and the ids of
 * the events it accepted.
 */
export class Traffic {
  readonly accepted = new Set<string>();
  /** Answers by kind: `202`, `503 Retry-After`, `503` (no Retry-After), `429 Retry-After`, `network error`, … */
  readonly answers = new Map<string, number>();
  private running = false;
  private readonly inflight = new Set<Promise<void>>();
  private loop: Promise<void> | undefined;

  private readonly url: string;
  private readonly key: string;
  private readonly o: { events?: number; everyMs?: number };

  constructor(url: string, key: string, o: { events?: number; everyMs?: number } = {}) {
    this.url = url;
    this.key = key;
    this.o = o;
  }

  start(): void {
    this.running = true;
    this.loop = (async () => {
      let i = 0;
      while (this.running) {
        const b = sdkBatch({ events: this.o.events ?? 10, sessionId: `chaos-${i % 30}`, page: `/p${i % 5}` });
        i++;
        const p = this.deliver(b);
        this.inflight.add(p);
        void p.finally(() => this.inflight.delete(p));
        await new Promise((r) => setTimeout(r, this.o.everyMs ?? 50));
      }
    })();
  }

  /** Stops sending new batches and waits until every batch sent so far was accepted. */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await Promise.all(this.inflight);
  }

  private count(kind: string): void {
    this.answers.set(kind, (this.answers.get(kind) ?? 0) + 1);
  }

  private async deliver(b: ReturnType<typeof sdkBatch>): Promise<void> {
    const body = JSON.stringify(b);
    for (let attempt = 0; attempt < 600; attempt++) {
      let wait = 250;
      try {
        const r = await fetch(this.url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${this.key}`,
            'content-type': 'application/json',
            'x-request-id': randomUUID(),
          },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        await r.arrayBuffer();
        const retryAfter = r.headers.get('retry-after');
        this.count(r.status === 202 ? '202' : `${r.status}${retryAfter ? ' Retry-After' : ''}`);
        if (r.status === 202) {
          for (const e of b.events) this.accepted.add(e.id as string);
          return;
        }
        if (retryAfter) wait = Math.min(1000, Number(retryAfter) * 1000);
      } catch {
        this.count('network error');
      }
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
