/**
 * Alert rule evaluation: pure functions, no I/O, time passed in. The processor's adapter (alert-evaluator.ts)
 * gathers the observations and stores what these functions decide. Scores are confusion scores (0-100 points);
 * a rule's `threshold` (0-1000) is read per trigger as documented on TRIGGERS.
 */

export const TRIGGER_TYPES = ['spike', 'anomaly', 'new_page', 'trend', 'co_occurrence', 'positive', 'budget'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

/** What each trigger means and the unit of its threshold (docs/alerts.md repeats this). */
export const TRIGGERS: Record<
  TriggerType,
  { meaning: string; threshold: string; followsScore: boolean; immediate: boolean }
> = {
  spike: {
    meaning: 'the page score rose by at least `threshold` against its level before (the score of the previous hour)',
    threshold: 'points of score (0-100 scale)',
    followsScore: true,
    immediate: false,
  },
  positive: {
    meaning: 'the page score fell by at least `threshold` against its level before (good news is an alert too)',
    threshold: 'points of score',
    followsScore: false,
    immediate: false,
  },
  budget: {
    meaning: "the page score is above `threshold`, the page's friction budget",
    threshold: 'score level',
    followsScore: true,
    immediate: true,
  },
  new_page: {
    meaning: 'a page first seen in the last 7 days has a score of at least `threshold`',
    threshold: 'score level',
    followsScore: true,
    immediate: true,
  },
  trend: {
    meaning: 'the daily score rose on each of the last 3 days and by at least `threshold` in all',
    threshold: 'points of score over the 3 days',
    followsScore: false,
    immediate: false,
  },
  anomaly: {
    meaning:
      'the score left its own baseline band: median ± max(3 × 1.4826 × MAD, threshold) of the same hour of the week over past weeks (a rolling 24 h of hours while fewer than 3 weeks exist); hours with fewer than 5 sessions are skipped',
    threshold: 'minimum half-width of the band, in points',
    followsScore: false,
    immediate: false,
  },
  co_occurrence: {
    meaning:
      'at least `threshold` sessions in the last 24 h show two or more signal types on the same element of the page',
    threshold: 'sessions',
    followsScore: false,
    immediate: false,
  },
};

/** Triggers evaluated when a page score changes (an alert within seconds); the others each scoring cycle. */
export const SCORE_FOLLOWING: readonly TriggerType[] = TRIGGER_TYPES.filter((t) => TRIGGERS[t].followsScore);

/** A condition must hold on this many consecutive evaluations before firing (except `immediate` triggers). */
export const CONSECUTIVE_TO_FIRE = 2;
/** Flapping: this many changes of the condition... */
export const FLAP_CHANGES = 4;
/** ...within the last this many evaluations hold the rule back (for that page) until it settles. */
export const FLAP_WINDOW = 20;
/** An active alert whose condition stayed clear this long is resolved with RESOLVED_REASON. */
export const AUTO_RESOLVE_MS = 15 * 60_000;
export const RESOLVED_REASON = 'condition cleared';
/** A page is new for this long after it was first seen. */
export const NEW_PAGE_MS = 7 * 24 * 3600_000;
/** Trend: consecutive daily rises required. */
export const TREND_DAYS = 3;
/** Anomaly: hours with fewer sessions than this are too thin to judge (skipped, both as baseline and as the current hour). */
export const ANOMALY_MIN_SESSIONS = 5;
/** Anomaly: same-hour samples needed before the weekly baseline replaces the rolling 24 h one. */
export const ANOMALY_MIN_WEEKS = 3;
/** Anomaly: band width in scaled MADs (1.4826 × MAD estimates a standard deviation). */
export const ANOMALY_MADS = 3;

/** What the adapter observed about one page (fields a trigger does not use may be absent). */
export interface PageObservation {
  page: string;
  /** Current score (0-100). */
  score: number;
  /** Sessions in the current window (anomaly skips thin hours). */
  sessions?: number;
  /** The score of the previous hour: the "level before" of spike and positive. */
  previousScore?: number | null;
  /** When the page was first seen (new_page). */
  firstSeenAt?: number | null;
  /** Daily scores, oldest first, ending with today (trend). */
  daily?: readonly number[];
  /** Same hour of the week over past weeks (anomaly), each with its sessions. */
  sameHourPastWeeks?: readonly { score: number; sessions: number }[];
  /** The last 24 hourly scores before this one (anomaly fallback). */
  last24h?: readonly { score: number; sessions: number }[];
  /** Sessions with two or more signal types on one element in the last 24 h (co_occurrence). */
  coOccurrenceSessions?: number;
}

export interface Condition {
  holds: boolean;
  scoreBefore: number | null;
  scoreAfter: number;
  /** Why, in words (shown in the alert and its messages). */
  summary: string;
}

const round = (n: number) => Math.round(n * 10) / 10;

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The baseline band of the anomaly trigger, or null when there is not enough history. */
export function anomalyBand(
  o: PageObservation,
  threshold: number,
): { low: number; high: number; median: number; source: 'weekly' | 'rolling_24h' } | null {
  const weekly = (o.sameHourPastWeeks ?? []).filter((x) => x.sessions >= ANOMALY_MIN_SESSIONS).map((x) => x.score);
  const rolling = (o.last24h ?? []).filter((x) => x.sessions >= ANOMALY_MIN_SESSIONS).map((x) => x.score);
  const [xs, source] =
    weekly.length >= ANOMALY_MIN_WEEKS ? [weekly, 'weekly' as const] : [rolling, 'rolling_24h' as const];
  if (xs.length < 3) return null;
  const med = median(xs);
  const mad = median(xs.map((x) => Math.abs(x - med)));
  const half = Math.max(ANOMALY_MADS * 1.4826 * mad, threshold);
  return { low: med - half, high: med + half, median: med, source };
}

/**
 * Whether the rule's condition holds for this page now. The summary is worded when read (an alert fired, a rule held
 * back): most evaluations are of quiet pairs, which never read it.
 */
export function conditionOf(trigger: TriggerType, threshold: number, o: PageObservation, now: number): Condition {
  const s = o.score;
  const before = o.previousScore ?? null;
  switch (trigger) {
    case 'spike':
    case 'positive': {
      // Mirror triggers: a rise against the level before, or a fall.
      const rises = trigger === 'spike';
      const change = before === null ? null : rises ? s - before : before - s;
      return {
        holds: change !== null && change >= threshold,
        scoreBefore: before,
        scoreAfter: s,
        get summary() {
          return `score ${rises ? 'rose' : 'fell'} from ${round(before ?? s)} to ${round(s)} (threshold ${rises ? '+' : '−'}${threshold})`;
        },
      };
    }
    case 'budget':
      return {
        holds: s > threshold,
        scoreBefore: before,
        scoreAfter: s,
        get summary() {
          return `score ${round(s)} is above the budget of ${threshold}`;
        },
      };
    case 'new_page': {
      const isNew = o.firstSeenAt != null && now - o.firstSeenAt <= NEW_PAGE_MS;
      return {
        holds: isNew && s >= threshold,
        scoreBefore: null,
        scoreAfter: s,
        get summary() {
          return `new page (first seen ${o.firstSeenAt ? new Date(o.firstSeenAt).toISOString().slice(0, 10) : '—'}) reached ${round(s)} (threshold ${threshold})`;
        },
      };
    }
    case 'trend': {
      const d = o.daily ?? [];
      const last = d.slice(-(TREND_DAYS + 1));
      const rising = last.length === TREND_DAYS + 1 && last.every((x, i) => i === 0 || x > last[i - 1]!);
      const rise = last.length ? last[last.length - 1]! - last[0]! : 0;
      return {
        holds: rising && rise >= threshold,
        scoreBefore: last[0] ?? null,
        scoreAfter: last[last.length - 1] ?? s,
        get summary() {
          return `daily score rose ${TREND_DAYS} days in a row by ${round(rise)} in all (threshold ${threshold})`;
        },
      };
    }
    case 'anomaly': {
      const band = anomalyBand(o, threshold);
      const thin = (o.sessions ?? ANOMALY_MIN_SESSIONS) < ANOMALY_MIN_SESSIONS;
      const holds = band !== null && !thin && (s > band.high || s < band.low);
      return {
        holds,
        scoreBefore: band ? round(band.median) : null,
        scoreAfter: s,
        get summary() {
          return band
            ? `score ${round(s)} is outside its ${band.source === 'weekly' ? 'same-hour weekly' : 'rolling 24 h'} band ${round(band.low)}–${round(band.high)}`
            : 'not enough history for a baseline';
        },
      };
    }
    case 'co_occurrence': {
      const n = o.coOccurrenceSessions ?? 0;
      return {
        holds: n >= threshold,
        scoreBefore: null,
        scoreAfter: s,
        get summary() {
          return `${n} sessions showed two or more signal types on the same element (threshold ${threshold})`;
        },
      };
    }
  }
}

/** What is remembered per (rule, page) between evaluations. */
export interface RuleState {
  /** Condition results of the last FLAP_WINDOW evaluations, oldest first. */
  recent: boolean[];
  /** Consecutive evaluations the condition held, up to now. */
  consecutive: number;
  /** When the condition was first seen clear while an alert was active (auto-resolve clock). */
  clearSince: number | null;
  /** The open alert of this rule and page (fired, acknowledged or investigating), if any. */
  activeAlertId: string | null;
  lastFiredAt: number | null;
  /** Held back for flapping, since when. */
  heldBackSince: number | null;
}

export const initialState = (): RuleState => ({
  recent: [],
  consecutive: 0,
  clearSince: null,
  activeAlertId: null,
  lastFiredAt: null,
  heldBackSince: null,
});

export type Decision =
  | { kind: 'none' }
  | { kind: 'fire'; condition: Condition }
  | { kind: 'resolve'; alertId: string; reason: string }
  | { kind: 'held_back'; condition: Condition; reason: string }
  | { kind: 'cooldown'; condition: Condition; until: number };

/** Changes between successive results (a flap is a change). */
export const changes = (xs: readonly boolean[]): number =>
  xs.reduce((n, x, i) => (i > 0 && x !== xs[i - 1] ? n + 1 : n), 0);

/**
 * One evaluation step of a rule for a page: the next state and what to do.
 * - fires when the condition held on CONSECUTIVE_TO_FIRE evaluations in a row (budget and new_page: at once),
 *   there is no open alert for the rule and page, and the cooldown since the last alert has passed;
 * - is held back (and says so) while the condition changed FLAP_CHANGES times in the last FLAP_WINDOW evaluations;
 * - resolves the open alert once the condition has stayed clear for AUTO_RESOLVE_MS.
 */
export function step(
  rule: { triggerType: TriggerType; cooldownMinutes: number },
  state: RuleState,
  c: Condition,
  now: number,
): { state: RuleState; decision: Decision } {
  const recent = [...state.recent, c.holds].slice(-FLAP_WINDOW);
  const consecutive = c.holds ? state.consecutive + 1 : 0;
  const flapping = changes(recent) >= FLAP_CHANGES;
  const next: RuleState = {
    ...state,
    recent,
    consecutive,
    heldBackSince: flapping ? (state.heldBackSince ?? now) : null,
  };
  if (!c.holds) {
    if (!state.activeAlertId) return { state: { ...next, clearSince: null }, decision: { kind: 'none' } };
    const clearSince = state.clearSince ?? now;
    if (now - clearSince >= AUTO_RESOLVE_MS) {
      return {
        state: { ...next, clearSince: null, activeAlertId: null },
        decision: { kind: 'resolve', alertId: state.activeAlertId, reason: RESOLVED_REASON },
      };
    }
    return { state: { ...next, clearSince }, decision: { kind: 'none' } };
  }
  next.clearSince = null;
  if (state.activeAlertId) return { state: next, decision: { kind: 'none' } };
  if (flapping)
    return {
      state: next,
      decision: {
        kind: 'held_back',
        condition: c,
        reason: `held back: the condition changed ${changes(recent)} times in the last ${recent.length} evaluations`,
      },
    };
  if (!TRIGGERS[rule.triggerType].immediate && consecutive < CONSECUTIVE_TO_FIRE)
    return { state: next, decision: { kind: 'none' } };
  const until = state.lastFiredAt === null ? 0 : state.lastFiredAt + rule.cooldownMinutes * 60_000;
  if (now < until) return { state: next, decision: { kind: 'cooldown', condition: c, until } };
  return { state: { ...next, lastFiredAt: now }, decision: { kind: 'fire', condition: c } };
}
