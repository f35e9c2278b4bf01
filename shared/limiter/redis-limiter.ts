import { Redis } from 'ioredis';
import type { Logger } from '../logger.ts';
import { MemoryRateLimiter, type LimitDecision, type RateLimiter } from './limiter.ts';

/**
 * Every key hit since the last flush, in one atomic step. KEYS: the log keys; ARGV[1]: a token unique to this flush
 * (members must be unique); then per key: window_ms, limit, hits. Per key it trims the log, admits
 * min(hits, limit - count) hits and returns {admitted, count before, retry_ms for the refused, reset_ms for the
 * admitted, reset_ms for the refused}: exactly what `hits` sequential single hits would have answered.
 * Uses Redis' clock (TIME) so every replica agrees on "now" regardless of its own clock.
 */
const SLIDING_LOG = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[i * 3 - 1])
  local limit = tonumber(ARGV[i * 3])
  local hits = tonumber(ARGV[i * 3 + 1])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local count = redis.call('ZCARD', key)
  local admitted = math.min(hits, math.max(0, limit - count))
  local j = 0
  while j < admitted do
    local args = {}
    local upto = math.min(admitted, j + 500)
    while j < upto do
      j = j + 1
      args[#args + 1] = now
      args[#args + 1] = now .. '-' .. ARGV[1] .. '-' .. i .. '-' .. j
    end
    redis.call('ZADD', key, unpack(args))
  end
  if admitted > 0 then redis.call('PEXPIRE', key, window) end
  local total = count + admitted
  local retry, resetRefused = 0, 0
  if admitted < hits then
    local oldest = redis.call('ZRANGE', key, total - limit, total - limit, 'WITHSCORES')
    local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    retry = tonumber(oldest[2]) + window - now
    resetRefused = tonumber(newest[2]) + window - now
  end
  local resetAdmitted = 0
  if admitted > 0 then
    local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    resetAdmitted = tonumber(first[2]) + window - now
  end
  out[#out + 1] = admitted
  out[#out + 1] = count
  out[#out + 1] = retry
  out[#out + 1] = resetAdmitted
  out[#out + 1] = resetRefused
end
return out
`;

interface Waiter {
  resolve(d: LimitDecision): void;
}

interface PendingKey {
  key: string;
  limit: number;
  windowMs: number;
  waiters: Waiter[];
}

/**
 * Limits shared by every replica through Redis. While Redis is unreachable the limiter degrades to a
 * per-process sliding log (documented: limits then hold per replica) instead of failing requests.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly kind = 'redis' as const;
  readonly redis: Redis;
  private readonly fallback = new MemoryRateLimiter();
  private readonly prefix: string;
  private readonly log: Logger;
  private seq = 0;
  private degraded = false;
  private readonly pending = new Map<string, PendingKey>();
  /** Script calls sent to Redis so far (one per flush, however many hits it carried). */
  roundTrips = 0;
  private flushScheduled = false;

  constructor(url: string, log: Logger, prefix = 'friction:rl:') {
    this.prefix = prefix;
    this.log = log;
    this.redis = new Redis(url, {
      // Fail fast instead of queueing while disconnected: the fallback answers meanwhile.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 500,
      enableAutoPipelining: true,
      lazyConnect: false,
    });
    this.redis.on('error', () => {});
    // numberOfKeys is given per call: a flush carries every key hit since the previous one.
    this.redis.defineCommand('slidingLog', { lua: SLIDING_LOG });
  }

  /**
   * Hits are coalesced: every hit of one event-loop turn goes to Redis in one script call (setImmediate), so a
   * busy ingest pays one round trip per turn instead of one per request, with the same answers as one by one.
   */
  hit(key: string, limit: number, windowMs: number): Promise<LimitDecision> {
    return new Promise((resolve) => {
      const id = `${key}\u0000${limit}\u0000${windowMs}`;
      let pending = this.pending.get(id);
      if (!pending) this.pending.set(id, (pending = { key, limit, windowMs, waiters: [] }));
      pending.waiters.push({ resolve });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const batch = [...this.pending.values()];
    this.pending.clear();
    try {
      const args: (string | number)[] = [`${process.pid}-${++this.seq}-${Math.random().toString(36).slice(2, 8)}`];
      for (const p of batch) args.push(p.windowMs, p.limit, p.waiters.length);
      this.roundTrips++;
      const reply = (await (
        this.redis as unknown as {
          slidingLog(keys: number, ...rest: (string | number)[]): Promise<number[]>;
        }
      ).slidingLog(batch.length, ...batch.map((p) => this.prefix + p.key), ...args)) as number[];
      if (this.degraded) {
        this.degraded = false;
        this.log.info('rate limiter: redis reachable again');
      }
      batch.forEach((p, i) => {
        const [admitted, count, retryMs, resetAdmittedMs, resetRefusedMs] = reply.slice(i * 5, i * 5 + 5);
        p.waiters.forEach((w, j) =>
          w.resolve(
            j < admitted
              ? {
                  allowed: true,
                  limit: p.limit,
                  remaining: Math.max(0, p.limit - (count + j + 1)),
                  retryAfterSec: 0,
                  resetSec: Math.max(0, Math.ceil(resetAdmittedMs / 1000)),
                }
              : {
                  allowed: false,
                  limit: p.limit,
                  remaining: 0,
                  retryAfterSec: Math.max(1, Math.ceil(retryMs / 1000)),
                  resetSec: Math.max(0, Math.ceil(resetRefusedMs / 1000)),
                },
          ),
        );
      });
    } catch (err) {
      if (!this.degraded) {
        this.degraded = true;
        this.log.warn({ err }, 'rate limiter: redis unreachable, limiting per process');
      }
      for (const p of batch)
        for (const w of p.waiters) void this.fallback.hit(p.key, p.limit, p.windowMs).then(w.resolve);
    }
  }

  /** Resolves once connected (requests before that use the in-process fallback). */
  async ready(): Promise<void> {
    if (this.redis.status !== 'ready') await new Promise((r) => this.redis.once('ready', r));
  }

  async healthy(): Promise<boolean> {
    return this.redis.status === 'ready';
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
