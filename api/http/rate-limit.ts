import { createHash } from 'node:crypto';
import type Koa from 'koa';
import { RateLimitedError } from '../../shared/errors.ts';
import type { RateLimiter } from '../../shared/limiter/limiter.ts';
import { setRateLimitHeaders } from '../../shared/http/rate-limit-headers.ts';
import type { Principal, Surface } from './auth.ts';

const WINDOW_MS = 60_000;

export interface SurfaceLimitConfig {
  /** Requests per minute per org on /v1/query/* (spec: 100). */
  readPerMin: number;
  /** Requests per minute per org on /v1/manage/* and the short-form writes (spec: 30). */
  managePerMin: number;
  /** Requests per minute per site on the guide surface (spec: 200). */
  guidePerMin: number;
  /** Requests per minute per client IP on /v1/auth/* (password guessing). */
  authPerMin: number;
  /** Sign-in attempts per account per 15 minutes, from any address (LOGIN_ATTEMPTS_PER_ACCOUNT). */
  loginPerAccount: number;
  /** Requests per minute per client IP without a valid credential (UNAUTH_RATE_LIMIT_PER_MIN). */
  unauthPerMin: number;
}

const ACCOUNT_WINDOW_MS = 15 * 60_000;
const MAILS_PER_ADDRESS_PER_HOUR = 5;

/**
 * The API's rate limits, on the shared limiter (Redis sliding log: exact, shared by every replica; while
 * Redis is unreachable each process limits on its own, never failing the request).
 */
export class SurfaceLimits {
  private readonly limiter: RateLimiter;
  private readonly cfg: SurfaceLimitConfig;

  constructor(limiter: RateLimiter, cfg: SurfaceLimitConfig) {
    this.limiter = limiter;
    this.cfg = cfg;
  }

  /** Counts one request of `principal` on `surface`; 429 `rate_limited` with Retry-After beyond the limit. */
  async enforce(ctx: Koa.Context, surface: Surface, principal: Principal): Promise<void> {
    if (surface === 'guide') {
      const site =
        typeof ctx.query.site_id === 'string' && principal.siteIds.has(ctx.query.site_id)
          ? ctx.query.site_id
          : ((principal.kind === 'key' ? principal.siteId : null) ?? principal.orgId);
      return this.apply(
        ctx,
        `guide:${site}`,
        this.cfg.guidePerMin,
        'guide surface limit of %d requests per minute per site exceeded',
      );
    }
    const [limit, what] = surface === 'read' ? [this.cfg.readPerMin, 'read'] : [this.cfg.managePerMin, 'write'];
    return this.apply(
      ctx,
      `${surface}:${principal.orgId}`,
      limit,
      `${what} API limit of %d requests per minute per organization exceeded`,
    );
  }

  /** Unauthenticated routes (signup, login, accept-invite): per client IP. */
  byIp(): Koa.Middleware {
    return async (ctx, next) => {
      await this.apply(
        ctx,
        `auth:${ctx.ip}`,
        this.cfg.authPerMin,
        'too many sign-in attempts from this address (%d per minute)',
      );
      await next();
    };
  }

  /**
   * One sign-in attempt against `email`, counted before the password is checked: an account's password cannot be
   * guessed faster than this however many addresses the guesses come from (botnet, rotated or spoofed addresses).
   * Counted before the check, atomically, so a parallel burst cannot slip past; the key is a hash (no addresses in
   * Redis).
   */
  async loginAttempt(ctx: Koa.Context, email: string): Promise<void> {
    const key = `login:${createHash('sha256').update(email).digest('base64url')}`;
    await this.apply(
      ctx,
      key,
      this.cfg.loginPerAccount,
      'too many sign-in attempts for this account (%d per 15 minutes); try again later',
      ACCOUNT_WINDOW_MS,
    );
  }

  /**
   * Whether Friction may mail `email` again now: at most 5 account mails per address per hour, so signups and
   * invitations cannot bomb someone's inbox. The caller answers the same either way (no enumeration).
   */
  async mayMail(email: string): Promise<boolean> {
    const key = `mail:${createHash('sha256').update(email).digest('base64url')}`;
    return (await this.limiter.hit(key, MAILS_PER_ADDRESS_PER_HOUR, 3600_000)).allowed;
  }

  /**
   * A request that presented no valid credential: counted per client IP, and refused with 429 beyond the limit, so
   * key and token guessing (and floods of anonymous requests) cost the caller, not the database.
   */
  async unauthenticated(ctx: Koa.Context): Promise<void> {
    await this.apply(
      ctx,
      `unauth:${ctx.ip}`,
      this.cfg.unauthPerMin,
      'too many unauthenticated requests from this address (%d per minute)',
    );
  }

  private async apply(
    ctx: Koa.Context,
    key: string,
    limit: number,
    message: string,
    windowMs = WINDOW_MS,
  ): Promise<void> {
    const d = await this.limiter.hit(key, limit, windowMs);
    setRateLimitHeaders((name, value) => ctx.set(name, value), d, windowMs);
    if (!d.allowed) throw new RateLimitedError(d.retryAfterSec, message.replace('%d', String(limit)));
  }
}
