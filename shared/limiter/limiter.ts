/**
 * Sliding-log rate limiting: at most `limit` hits in any `windowMs`-long interval, exactly (no double
 * allowance across a window boundary, which fixed windows allow).
 */
export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the next hit would be allowed (0 when allowed). */
  retryAfterSec: number;
  /** Seconds until the window holds no hits of now. */
  resetSec: number;
}

export interface RateLimiter {
  readonly kind: 'redis' | 'memory';
  hit(key: string, limit: number, windowMs: number): Promise<LimitDecision>;
  close(): Promise<void>;
}

/** In-process sliding log: the embedded default, and the fallback while Redis is unreachable. */
export class MemoryRateLimiter implements RateLimiter {
  readonly kind = 'memory' as const;
  private readonly logs = new Map<string, number[]>();
  private readonly now: () => number;
  private hits = 0;

  constructor(opts: { now?: () => number } = {}) {
    this.now = opts.now ?? Date.now;
  }

  async hit(key: string, limit: number, windowMs: number): Promise<LimitDecision> {
    const now = this.now();
    let log = this.logs.get(key);
    if (!log) this.logs.set(key, (log = []));
    let drop = 0;
    while (drop < log.length && log[drop] <= now - windowMs) drop++;
    if (drop) log.splice(0, drop);
    if (++this.hits % 10_000 === 0) this.sweep(now, windowMs);
    if (log.length >= limit) {
      const retryMs = log[log.length - limit] + windowMs - now;
      return {
        allowed: false,
        limit,
        remaining: 0,
        retryAfterSec: Math.max(1, Math.ceil(retryMs / 1000)),
        resetSec: Math.ceil((log[log.length - 1] + windowMs - now) / 1000),
      };
    }
    log.push(now);
    return {
      allowed: true,
      limit,
      remaining: limit - log.length,
      retryAfterSec: 0,
      resetSec: Math.ceil((log[0] + windowMs - now) / 1000),
    };
  }

  /** Forgets keys with no recent hits so memory stays bounded by active keys. */
  private sweep(now: number, windowMs: number): void {
    for (const [k, log] of this.logs)
      if (log.length === 0 || log[log.length - 1] <= now - windowMs) this.logs.delete(k);
  }

  async close(): Promise<void> {}
}
