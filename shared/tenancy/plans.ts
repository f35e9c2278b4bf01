import { AppError } from '../errors.ts';

/**
 * Commercial constants (spec "What the service does"): sites and sessions per calendar month (UTC) per plan.
 * Enterprise is custom: its limits live on the org row (`site_limit`, `session_limit`), null meaning none.
 * Any plan's row values, when set, override the plan's (a negotiated limit).
 */
export const PLANS = {
  grow: { sites: 1, sessionsPerMonth: 50_000 },
  scale: { sites: 5, sessionsPerMonth: 250_000 },
  pro: { sites: 10, sessionsPerMonth: 1_000_000 },
  enterprise: { sites: null, sessionsPerMonth: null },
} as const satisfies Record<string, { sites: number | null; sessionsPerMonth: number | null }>;
export type Plan = keyof typeof PLANS;
/** Plans a signup may choose; Enterprise is arranged, not self-served. */
export const SELF_SERVE_PLANS = ['grow', 'scale', 'pro'] as const;

/** One self-serve trial per org, starting when the org is created; nothing ever resets it. */
export const TRIAL_DAYS = 3;

export interface PlanLimits {
  /** null: unlimited */
  sites: number | null;
  sessionsPerMonth: number | null;
}

/** The plan a self-serve trial runs on: the trial is for trying everything self-serve offers. */
export const TRIAL_PLAN: Plan = 'pro';

/**
 * The limits that apply to an org at `now` (its OrgUsage): its custom values where set, else its plan's; during its trial a
 * self-serve org has the trial plan's limits (a new `grow` org can set up more than one site while it evaluates).
 */
export function limitsOf(
  org: { plan: string; siteLimit: number | null; sessionLimit: number | null; trialEndsAt: Date | null },
  now: Date = new Date(),
): PlanLimits {
  const own = PLANS[org.plan as Plan] ?? PLANS.grow;
  const inTrial =
    org.trialEndsAt !== null && org.trialEndsAt > now && (SELF_SERVE_PLANS as readonly string[]).includes(org.plan);
  const plan = inTrial ? PLANS[TRIAL_PLAN] : own;
  return { sites: org.siteLimit ?? plan.sites, sessionsPerMonth: org.sessionLimit ?? plan.sessionsPerMonth };
}

/** Start of the UTC calendar month of `at`. */
export function monthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/** Start of the next UTC calendar month after `at`: when session counts start again from zero. */
export function nextMonthStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

export function trialEndsAt(createdAt: Date): Date {
  return new Date(createdAt.getTime() + TRIAL_DAYS * 24 * 3600 * 1000);
}

/** 429 `quota_exceeded`: a plan limit (sites, monthly sessions) is reached. Not a rate limit: retrying soon does not help. */
export class QuotaExceededError extends AppError {
  constructor(message: string, details: Record<string, unknown>, retryAfterSec?: number) {
    super('quota_exceeded', 429, message, { details, retryAfterSec });
  }
}
