import { Redis } from 'ioredis';
import type { Logger } from '../logger.ts';
import { MemoryRateLimiter, type LimitDecision, type RateLimiter } from './limiter.ts';

/**
 * KEYS[1] log key; ARGV: now_ms, window_ms, limit, member. One atomic step: trim the log, count, add when allowed.
 * Uses Redis' clock (TIME) so every API replica agrees on "now" regardless of its own clock.
 */
const SLIDING_LOG = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
  local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  return {0, count, tonumber(oldest[2]) + window - now, tonumber(newest[2]) + window - now}
end
redis.call('ZADD', KEYS[1], now, now .. '-' .. ARGV[3])
redis.call('PEXPIRE', KEYS[1], window)
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {1, count + 1, 0, tonumber(first[2]) + window - now}
`;

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
    this.redis.defineCommand('slidingLog', { numberOfKeys: 1, lua: SLIDING_LOG });
  }

  async hit(key: string, limit: number, windowMs: number): Promise<LimitDecision> {
    try {
      const member = `${process.pid}-${++this.seq}-${Math.random().toString(36).slice(2, 8)}`;
      const [allowed, count, retryMs, resetMs] = (await (this.redis as unknown as {
        slidingLog(k: string, w: number, l: number, m: string): Promise<number[]>;
      }).slidingLog(this.prefix + key, windowMs, limit, member)) as number[];
      if (this.degraded) {
        this.degraded = false;
        this.log.info('rate limiter: redis reachable again');
      }
      return {
        allowed: allowed === 1,
        limit,
        remaining: Math.max(0, limit - count),
        retryAfterSec: allowed === 1 ? 0 : Math.max(1, Math.ceil(retryMs / 1000)),
        resetSec: Math.max(0, Math.ceil(resetMs / 1000)),
      };
    } catch (err) {
      if (!this.degraded) {
        this.degraded = true;
        this.log.warn({ err: (err as Error).message }, 'rate limiter: redis unreachable, limiting per process');
      }
      return this.fallback.hit(key, limit, windowMs);
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
