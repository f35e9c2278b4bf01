import { MAX_SIGNAL_WEIGHT, signalWeight } from '../../shared/domain/signal-catalog.ts';
import { ACTIVE_STATUSES, type IssueStatus } from '../../shared/domain/issue-status.ts';
import type { ClusterKey, ClusterSummary, EvidenceSession } from './cluster-state.ts';
import { issueText } from './issue-text.ts';
import { round1 } from './confusion-score.ts';
import { HOUR_MS } from './time.ts';
import { compareStrings } from './util.ts';

export * from './cluster-state.ts';

/**
 * Issue rules over clusters: when a cluster becomes an issue, how severe it is, its generated text, and whether a
 * cluster's new state creates, updates or leaves alone the stored issue (so the processor knows when to publish
 * `issue.created` / `issue.updated`). The cluster state itself is in cluster-state.ts (re-exported here).
 *
 * The key includes the signal type, so an element whose dead clicks are fixed while rage clicks appear has two
 * clusters: the dead_click issue goes quiet and is resolved (triage, or verification after a deploy) while the
 * rage_click cluster opens a separate new issue.
 */

// The statuses are shared with the API (filters, counts); re-exported so the engine has one import for them.
export { ACTIVE_STATUSES, type IssueStatus } from '../../shared/domain/issue-status.ts';

/** An issue opens with at least this many signals in the cluster window (7 days). */
export const MIN_ISSUE_SIGNALS = 5;
/** …from at least this many distinct sessions, so one visitor's habits never open an issue on their own. */
export const MIN_ISSUE_SESSIONS = 3;
/** Share of a page's sessions affected at which the share factor saturates: a quarter of visitors is as bad as it gets. */
export const SHARE_SATURATION = 0.25;
/** Page sessions (24 h) at which the traffic factor saturates; it grows with log(1 + sessions) below that. */
export const TRAFFIC_SATURATION_SESSIONS = 1000;
/** Time since the last signal after which the recency factor halves. */
export const RECENCY_HALF_LIFE_MS = 12 * HOUR_MS;
/** `issue.updated` is published when severity enters a higher band of this many points. */
export const SEVERITY_NOTIFY_BAND = 10;

/** Whether a cluster is enough to open an issue: a catalogued (weight > 0) type, ≥ 5 signals, ≥ 3 sessions. */
export function opensIssue(summary: ClusterSummary): boolean {
  return (
    signalWeight(summary.key.signalType) > 0 &&
    summary.signalCount >= MIN_ISSUE_SIGNALS &&
    summary.affectedSessions >= MIN_ISSUE_SESSIONS
  );
}

/** What severity is computed from. */
export interface SeverityInput {
  signalType: string;
  /** Distinct sessions on the page in the 24 h page window. */
  pageSessions: number;
  /** Distinct sessions with a signal of this cluster in the same 24 h window. */
  windowAffectedSessions: number;
  /** Epoch ms of the cluster's latest signal; null when it never had one. */
  lastSignalAt: number | null;
  /** Epoch ms. */
  now: number;
}

/** The four factors of severity, each 0..1, exposed so the API and tests can explain a severity. */
export function severityFactors(i: SeverityInput): { share: number; weight: number; traffic: number; recency: number } {
  const pageSessions = Math.max(0, i.pageSessions);
  const shareOfSessions = pageSessions > 0 ? Math.min(1, Math.max(0, i.windowAffectedSessions) / pageSessions) : 0;
  return {
    share: Math.min(1, shareOfSessions / SHARE_SATURATION),
    weight: Math.min(1, signalWeight(i.signalType) / MAX_SIGNAL_WEIGHT),
    traffic: Math.min(1, Math.log1p(pageSessions) / Math.log1p(TRAFFIC_SATURATION_SESSIONS)),
    recency: i.lastSignalAt === null ? 0 : 0.5 ** (Math.max(0, i.now - i.lastSignalAt) / RECENCY_HALF_LIFE_MS),
  };
}

/**
 * Severity 0..100 (one decimal) = 100 × share × weight × traffic × recency, where
 * share = min(1, (affected / page sessions, both over the 24 h page window) / 0.25), weight = weight / 10,
 * traffic = min(1, ln(1 + page sessions) / ln(1001)), recency = 0.5^(hours since last signal / 12).
 * It measures impact now: an issue with no signal in the last 24 h has severity 0 (its counts still show the week).
 */
export function issueSeverity(i: SeverityInput): number {
  const f = severityFactors(i);
  return round1(100 * f.share * f.weight * f.traffic * f.recency);
}

/** A new issue, ready to insert. */
export interface IssueDraft {
  readonly key: ClusterKey;
  readonly status: 'open';
  readonly page: string;
  /** Latest raw selector (the key holds the canonical one). */
  readonly selector: string;
  readonly signalType: string;
  readonly label: string | null;
  readonly title: string;
  readonly hypothesis: string;
  readonly signalCount: number;
  readonly affectedSessions: number;
  readonly severity: number;
  /** Epoch ms. */
  readonly firstSignalAt: number;
  /** Epoch ms. */
  readonly lastSignalAt: number;
  readonly evidence: readonly EvidenceSession[];
}

/** The severity of a cluster's summary on a page with `pageSessions` sessions (24 h). */
const summarySeverity = (summary: ClusterSummary, pageSessions: number, now: number): number =>
  issueSeverity({
    signalType: summary.key.signalType,
    pageSessions,
    windowAffectedSessions: summary.windowAffectedSessions,
    lastSignalAt: summary.lastSignalAt,
    now,
  });

/** The issue a cluster summary stands for, with severity at `now` (threshold not checked: see `opensIssue`). */
export function draftIssue(summary: ClusterSummary, pageSessions: number, now: number): IssueDraft {
  const text = issueText({
    signalType: summary.key.signalType,
    label: summary.label,
    selector: summary.selector,
    page: summary.key.page,
  });
  return {
    key: summary.key,
    status: 'open',
    page: summary.key.page,
    selector: summary.selector,
    signalType: summary.key.signalType,
    label: summary.label,
    title: text.title,
    hypothesis: text.hypothesis,
    signalCount: summary.signalCount,
    affectedSessions: summary.affectedSessions,
    severity: summarySeverity(summary, pageSessions, now),
    firstSignalAt: summary.firstSignalAt,
    lastSignalAt: summary.lastSignalAt,
    evidence: summary.evidence,
  };
}

/** The fields of a stored issue the live decision reads. */
export interface IssueRecord {
  readonly id: string;
  readonly status: IssueStatus;
  readonly frozen: boolean;
  readonly selector: string;
  readonly label: string | null;
  readonly signalCount: number;
  readonly affectedSessions: number;
  readonly severity: number;
  /** Epoch ms of the latest signal ever folded into the issue; null if none. */
  readonly lastSignalAt: number | null;
  /** Epoch ms when the issue last became resolved or verified; null if never. */
  readonly resolvedAt: number | null;
  /** Epoch ms when the live rule last saw it signalling again after a closure; null if never. */
  readonly signallingAgainAt?: number | null;
  /** Stored evidence; when omitted, new evidence is always written. */
  readonly evidence?: readonly EvidenceSession[];
}

/** Fields of an issue the live path may change. Title and hypothesis are refreshed by the nightly triage only. */
export interface IssueChanges {
  status?: IssueStatus;
  selector?: string;
  label?: string | null;
  signalCount?: number;
  affectedSessions?: number;
  severity?: number;
  lastSignalAt?: number | null;
  evidence?: readonly EvidenceSession[];
  /** The closed issue started signalling again now (shown to people; the status is left to the deploy looks' tests). */
  signallingAgainAt?: number;
}

/** What the processor does with a cluster's issue after a batch or an eviction. */
export type IssueDecision =
  | { readonly action: 'none' }
  | { readonly action: 'create'; readonly issue: IssueDraft }
  /** `notify`: publish `issue.updated` (material change); otherwise store quietly. */
  | { readonly action: 'update'; readonly changes: IssueChanges; readonly notify: boolean };

/** Input of `decideIssue`. */
export interface DecideInput {
  /** The cluster at `now`, or null when its window is empty (all its signals aged out). */
  summary: ClusterSummary | null;
  /** The stored issue for the cluster's key, or null. */
  existing: IssueRecord | null;
  /** Distinct sessions of the cluster's page in the 24 h window. */
  pageSessions: number;
  /** Epoch ms. */
  now: number;
  /** For a resolved or verified issue: sessions with a signal after `resolvedAt` (cluster-state `sessionsActiveSince`). */
  sessionsSinceResolved?: number;
}

function sameEvidence(a: readonly EvidenceSession[] | undefined, b: readonly EvidenceSession[]): boolean {
  if (a === undefined || a.length !== b.length) return false;
  return a.every(
    (x, i) => x.sessionId === b[i]?.sessionId && x.signals === b[i]?.signals && x.lastSignalAt === b[i]?.lastSignalAt,
  );
}

const countBand = (n: number): number => (n <= 0 ? -1 : Math.floor(Math.log2(n)));
const severityBand = (s: number): number => Math.floor(s / SEVERITY_NOTIFY_BAND);

/**
 * What to do with the issue of one cluster after a batch (or eviction) changed it:
 * - no issue yet: `create` when `opensIssue`, else `none`;
 * - an issue: `update` with the data fields that changed (counts, severity, evidence, latest selector/label), or
 *   `none` when nothing did. A resolved or verified issue with ≥ MIN_ISSUE_SESSIONS sessions active since
 *   `resolvedAt` is marked signalling again (`signallingAgainAt`, once per closure): a live signal for people to see,
 *   not a regression — three visitors whose open tabs still run the old bundle are no evidence, so `regressed` is
 *   decided only by a deploy look's test (grace period, version cohort, overdispersion). The live path never changes
 *   a status.
 * `notify` (publish `issue.updated`) is true for a status change, and for an active issue whose signal count
 * reaches a new power of two or whose severity enters a higher 10-point band: a hot issue changes every batch,
 * and subscribers want to hear that it got worse, not every increment.
 */
export function decideIssue(input: DecideInput): IssueDecision {
  const { summary, existing, pageSessions, now } = input;
  if (existing === null) {
    return summary !== null && opensIssue(summary)
      ? { action: 'create', issue: draftIssue(summary, pageSessions, now) }
      : { action: 'none' };
  }
  const next: Required<Omit<IssueChanges, 'status' | 'signallingAgainAt'>> =
    summary === null
      ? {
          selector: existing.selector,
          label: existing.label,
          signalCount: 0,
          affectedSessions: 0,
          severity: 0,
          lastSignalAt: existing.lastSignalAt,
          evidence: [],
        }
      : {
          selector: summary.selector,
          label: summary.label ?? existing.label,
          signalCount: summary.signalCount,
          affectedSessions: summary.affectedSessions,
          severity: summarySeverity(summary, pageSessions, now),
          lastSignalAt: Math.max(existing.lastSignalAt ?? -Infinity, summary.lastSignalAt),
          evidence: summary.evidence,
        };
  const changes: IssueChanges = {};
  if (next.selector !== existing.selector) changes.selector = next.selector;
  if (next.label !== existing.label) changes.label = next.label;
  if (next.signalCount !== existing.signalCount) changes.signalCount = next.signalCount;
  if (next.affectedSessions !== existing.affectedSessions) changes.affectedSessions = next.affectedSessions;
  if (next.severity !== existing.severity) changes.severity = next.severity;
  if (next.lastSignalAt !== existing.lastSignalAt) changes.lastSignalAt = next.lastSignalAt;
  if (!sameEvidence(existing.evidence, next.evidence)) changes.evidence = next.evidence;

  const signallingAgain =
    (existing.status === 'resolved' || existing.status === 'verified') &&
    summary !== null &&
    (input.sessionsSinceResolved ?? 0) >= MIN_ISSUE_SESSIONS &&
    // Once per closure: a mark older than the closure belongs to an earlier one.
    (existing.signallingAgainAt == null ||
      existing.resolvedAt === null ||
      existing.signallingAgainAt < existing.resolvedAt);
  if (signallingAgain) changes.signallingAgainAt = now;

  if (Object.keys(changes).length === 0) return { action: 'none' };
  const worse =
    ACTIVE_STATUSES.has(existing.status) &&
    (countBand(next.signalCount) > countBand(existing.signalCount) ||
      severityBand(next.severity) > severityBand(existing.severity));
  return { action: 'update', changes, notify: worse };
}

/** What issue ranking reads. */
export interface RankableIssue {
  readonly severity: number;
  readonly affectedSessions: number;
  readonly signalCount: number;
  readonly page: string;
  readonly selector: string;
  readonly signalType: string;
}

/** Orders issues most urgent first: severity, then affected sessions, then signals, then page/selector/type. */
export function compareIssues(a: RankableIssue, b: RankableIssue): number {
  return (
    b.severity - a.severity ||
    b.affectedSessions - a.affectedSessions ||
    b.signalCount - a.signalCount ||
    compareStrings(a.page, b.page) ||
    compareStrings(a.selector, b.selector) ||
    compareStrings(a.signalType, b.signalType)
  );
}

/** A ranked copy of `issues` (see `compareIssues`). */
export function rankIssues<T extends RankableIssue>(issues: readonly T[]): T[] {
  return [...issues].sort(compareIssues);
}
