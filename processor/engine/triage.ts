import { ACTIVE_STATUSES, issueSeverity, type IssueStatus } from './clustering.ts';
import { issueText } from './issue-text.ts';
import { canonicalSelector } from './selectors.ts';
import { DAY_MS } from './time.ts';
import { compareStrings } from './util.ts';

/**
 * The nightly triage as a pure planner: given the stored issues and `now`, the list of changes to make. The
 * processor's scheduled job applies each action as one issue update (and publishes `issue.updated`). Three rules:
 * 1. Merge: active issues of one site, page and signal type whose selectors are variants (selectors.ts) are one
 *    element; the oldest (createdAt, then id) survives, the others are resolved with `mergedInto` pointing at it.
 *    Live clusters already key on the canonical selector, so this repairs issues stored under older or different
 *    keys; the survivor's counts come from its cluster, which spans every variant.
 * 2. Resolve: an open, triaged or regressed issue with no signal for RESOLVE_AFTER_DAYS (its cluster window is
 *    empty by then, so every count it shows is 0). `in_progress` is left alone: someone has claimed it and closes it.
 * 3. Refresh: an active issue's title and hypothesis are regenerated (the label may have changed) and its severity
 *    recomputed at `now`, so quiet issues sink as recency decays.
 * A `frozen` issue is never touched by any rule, as the spec requires: not merged (neither absorbed nor absorbing),
 * not resolved, not rewritten.
 */

/** Days without a signal after which an issue is resolved: the cluster window, so the issue's counts are all 0. */
export const RESOLVE_AFTER_DAYS = 7;
/** Statuses the triage may resolve. */
export const AUTO_RESOLVE_STATUSES: ReadonlySet<IssueStatus> = new Set<IssueStatus>(['open', 'triaged', 'regressed']);

/** A stored issue as the triage sees it. */
export interface TriageIssue {
  readonly id: string;
  readonly siteId: string;
  readonly page: string;
  /** Stored (raw) selector; '' for page-level issues. */
  readonly selector: string;
  readonly signalType: string;
  readonly status: IssueStatus;
  readonly frozen: boolean;
  readonly title: string;
  readonly hypothesis: string;
  readonly label: string | null;
  readonly severity: number;
  /** Epoch ms. */
  readonly createdAt: number;
  /** Epoch ms of the latest signal; null when none was recorded. */
  readonly lastSignalAt: number | null;
  /** Current distinct sessions of the page (24 h window), from the processor's windows; omitted means 0. */
  readonly pageSessions?: number;
  /** Current sessions of the issue's cluster in the same window; omitted means 0. */
  readonly windowAffectedSessions?: number;
}

/** The fields a triage action sets. */
export interface TriageChanges {
  status?: IssueStatus;
  /** Id of the issue that absorbed this one. */
  mergedInto?: string;
  title?: string;
  hypothesis?: string;
  severity?: number;
}

/** One issue update. At most one action per issue; `kind` names the strongest rule that applied. */
export interface TriageAction {
  readonly kind: 'merge' | 'resolve' | 'refresh';
  readonly issueId: string;
  readonly changes: TriageChanges;
  /** Human-readable reason, for the issue's update history. */
  readonly reason: string;
}

const KIND_ORDER = { merge: 0, resolve: 1, refresh: 2 } as const;

/** Plans the nightly triage at `now` (epoch ms). Deterministic: same issues and `now`, same actions in the same order. */
export function planTriage(issues: readonly TriageIssue[], now: number): TriageAction[] {
  const actions: TriageAction[] = [];
  const candidates = issues.filter((i) => !i.frozen && ACTIVE_STATUSES.has(i.status));

  // 1. Merge variant groups.
  const groups = new Map<string, TriageIssue[]>();
  for (const i of candidates) {
    const k = `${i.siteId}\u0000${i.page}\u0000${canonicalSelector(i.selector)}\u0000${i.signalType}`;
    groups.set(k, [...(groups.get(k) ?? []), i]);
  }
  const absorbed = new Set<string>();
  const lastSignalOf = new Map<string, number | null>();
  for (const group of groups.values()) {
    const [survivor, ...rest] = [...group].sort((a, b) => a.createdAt - b.createdAt || compareStrings(a.id, b.id));
    if (survivor === undefined) continue;
    let last = survivor.lastSignalAt;
    for (const r of rest) {
      absorbed.add(r.id);
      if (r.lastSignalAt !== null && (last === null || r.lastSignalAt > last)) last = r.lastSignalAt;
      actions.push({
        kind: 'merge',
        issueId: r.id,
        changes: { status: 'resolved', mergedInto: survivor.id },
        reason: `same element as ${survivor.id} (selector variant of '${survivor.selector}')`,
      });
    }
    // The survivor now stands for the whole group: it is quiet only if every member is.
    lastSignalOf.set(survivor.id, last);
  }

  // 2 and 3. Resolve quiet issues, refresh the rest (one action per issue, changes combined).
  for (const i of candidates) {
    if (absorbed.has(i.id)) continue;
    const changes: TriageChanges = {};
    const last = lastSignalOf.get(i.id) ?? i.lastSignalAt;
    const quietSince = last ?? i.createdAt;
    const resolve = AUTO_RESOLVE_STATUSES.has(i.status) && now - quietSince >= RESOLVE_AFTER_DAYS * DAY_MS;
    if (resolve) changes.status = 'resolved';

    const text = issueText({ signalType: i.signalType, label: i.label, selector: i.selector, page: i.page });
    if (text.title !== i.title) changes.title = text.title;
    if (text.hypothesis !== i.hypothesis) changes.hypothesis = text.hypothesis;
    const severity = issueSeverity({
      signalType: i.signalType,
      pageSessions: i.pageSessions ?? 0,
      windowAffectedSessions: i.windowAffectedSessions ?? 0,
      lastSignalAt: last,
      now,
    });
    if (severity !== i.severity) changes.severity = severity;

    if (Object.keys(changes).length === 0) continue;
    actions.push({
      kind: resolve ? 'resolve' : 'refresh',
      issueId: i.id,
      changes,
      reason: resolve
        ? `no signal for ${Math.floor((now - quietSince) / DAY_MS)} days (resolves after ${RESOLVE_AFTER_DAYS})`
        : 'nightly refresh of title, hypothesis and severity',
    });
  }
  return actions.sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || compareStrings(a.issueId, b.issueId));
}
