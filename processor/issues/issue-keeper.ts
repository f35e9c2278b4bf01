import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { Environment } from '../../shared/domain/deploy-verification.ts';
import type { Logger } from '../../shared/logger.ts';
import {
  ClusterReader,
  MIN_ISSUE_SESSIONS,
  applySignals,
  clusterKeyString,
  commitClusterUpdate,
  createClusterState,
  decideIssue,
  evictClusters,
  getCluster,
  siteClusters,
  summarizeCluster,
  foldSignals,
  type ClusterKey,
  type ClusterState,
  type IssueChanges,
} from '../engine/clustering.ts';
import { aggregateElement, type ElementAggregate } from '../engine/elements.ts';
import type { EngineEvent } from '../engine/events.ts';
import { clusterWindowStart } from '../engine/time.ts';
import {
  insertIssueUpdates,
  insertIssues,
  issueKeyString,
  loadIssuesForKeys,
  loadSignalEvents,
  loadSiteIssues,
  updateIssues,
  type IssueUpdateRow,
  type NewIssue,
} from '../store/issues.store.ts';
import { newId } from '../../shared/ids.ts';
import { writeElements } from '../store/elements.store.ts';
import { enqueueOutbox, type OutboxMessage } from '../../shared/notify/outbox.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** Distinct sessions of a page in the 24 h window (from the score windows), for issue severity. */
export type PageSessions = (siteId: string, page: string) => number;

/** The issue fields published with issue.created / issue.updated (with its environment: staging issues notify too). */
export function issuePayload(
  id: string,
  environment: Environment,
  f: {
    siteId: string;
    page: string;
    selector: string;
    signalType: string;
    title: string;
    status: string;
    signalCount: number;
    affectedSessions: number;
    severity: number;
  },
) {
  return {
    id,
    site_id: f.siteId,
    environment,
    page: f.page,
    element_selector: f.selector,
    signal_type: f.signalType,
    title: f.title,
    status: f.status,
    signal_count: f.signalCount,
    affected_sessions: f.affectedSessions,
    severity: f.severity,
  };
}

/**
 * Keeps the issue clusters of the last 7 days in memory (a cache of the stored signals, rebuilt at start) and,
 * in the batch transaction, creates and updates `ux_issues`, their evidence sessions and the element aggregates,
 * and queues issue.created / issue.updated notifications in the outbox. Staged like the score windows: the batch
 * is read as a patch over the committed clusters and applied in place only after the commit. A batch costs
 * O(its events and the clusters and elements it touches), whatever the sessions already in them.
 * One keeper per environment: its clusters, and the issues and elements it writes, are that environment's.
 */
export class IssueKeeper {
  readonly environment: Environment;
  private readonly state: ClusterState = createClusterState();
  private readonly log: Logger;

  /** Cluster keys evicted by a tick that has not committed yet. */
  private readonly evictedPending = new Map<string, ClusterKey>();

  constructor(opts: { log: Logger; environment?: Environment }) {
    this.log = opts.log;
    this.environment = opts.environment ?? 'production';
  }

  /** Drops a site's clusters (before rebuilding them from the database, after an erasure). */
  forgetSite(siteId: string): void {
    this.state.sites.delete(siteId);
  }

  /** Rebuilds the clusters of these sites from the stored signals of the cluster window. */
  async rebuild(db: Db, siteIds: readonly string[], now: number): Promise<void> {
    let n = 0;
    for (const siteId of siteIds) {
      for await (const rows of loadSignalEvents(db, siteId, this.environment, clusterWindowStart(now))) {
        applySignals(this.state, rows);
        n += rows.length;
      }
    }
    this.log.info({ environment: this.environment, sites: siteIds.length, signals: n }, 'issue clusters rebuilt');
  }

  /** Stages a batch: writes issue and element rows in `trx`; returns what makes the new clusters current. */
  async stage(
    trx: Transaction<Database>,
    events: readonly EngineEvent[],
    now: number,
    pageSessions: PageSessions,
  ): Promise<{ apply: () => void; notified: number }> {
    const update = foldSignals(this.state, events);
    if (update.clusters.length === 0) return { apply: () => {}, notified: 0 };
    const notified = await this.reconcile(
      trx,
      update.clusters.map((c) => c.key),
      now,
      pageSessions,
      new ClusterReader(this.state, update),
    );
    return { apply: () => commitClusterUpdate(this.state, update), notified };
  }

  /** The committed clusters, read-only: what a recomputation from the stored rows must equal (tests, checks). */
  get clusters(): Readonly<ClusterState> {
    return this.state;
  }

  /** Distinct sessions of a cluster whose latest signal is in the 24 h window (triage severity). */
  windowAffectedSessions(
    siteId: string,
    page: string,
    clusterSelector: string,
    signalType: string,
    now: number,
  ): number {
    return (
      summarizeCluster(getCluster(this.state, { siteId, page, selector: clusterSelector, signalType }), now)
        ?.windowAffectedSessions ?? 0
    );
  }

  /**
   * Re-decides every cluster of a site and every stored issue of it (recompute): issues whose signals are gone
   * get their counts set to 0, missing issues are created, elements rewritten.
   */
  async reconcileSite(db: Db, siteId: string, now: number, pageSessions: PageSessions): Promise<number> {
    const keys = new Map<string, ClusterKey>();
    for (const c of siteClusters(this.state, siteId)) keys.set(clusterKeyString(c.key), c.key);
    for (const r of await loadSiteIssues(db, siteId, this.environment)) {
      const key = { siteId, page: r.page, selector: r.clusterSelector, signalType: r.signalType };
      keys.set(clusterKeyString(key), key);
    }
    return this.reconcile(db, [...keys.values()], now, pageSessions, new ClusterReader(this.state));
  }

  /** Drops days that left the cluster window and updates the issues and elements that lost them. */
  async tick(db: Db, now: number, pageSessions: PageSessions): Promise<{ notified: number; commit: () => void }> {
    // Evicted clusters are gone from memory at once; the keys whose issues must be re-decided are kept until a
    // tick that reconciled them committed, so a failed tick loses none of them.
    for (const k of evictClusters(this.state, now)) this.evictedPending.set(clusterKeyString(k), k);
    const changed = [...this.evictedPending.values()];
    if (changed.length === 0) return { notified: 0, commit: () => {} };
    const notified = await this.reconcile(db, changed, now, pageSessions, new ClusterReader(this.state));
    return { notified, commit: () => this.evictedPending.clear() };
  }

  private async reconcile(
    db: Db,
    keys: readonly ClusterKey[],
    now: number,
    pageSessions: PageSessions,
    reader: ClusterReader,
  ): Promise<number> {
    const existing = await loadIssuesForKeys(db, this.environment, keys);
    const outbox: OutboxMessage[] = [];
    const creates: NewIssue[] = [];
    const updates: IssueUpdateRow[] = [];
    const history: Parameters<typeof insertIssueUpdates>[1][number][] = [];
    const at = new Date(now).toISOString();
    for (const key of keys) {
      const rec = existing.get(issueKeyString(key)) ?? null;
      const decision = decideIssue({
        summary: reader.summary(key, now),
        existing: rec,
        pageSessions: pageSessions(key.siteId, key.page),
        now,
        sessionsSinceResolved:
          rec?.resolvedAt != null ? reader.activeSince(key, rec.resolvedAt, now, MIN_ISSUE_SESSIONS) : undefined,
      });
      if (decision.action === 'create') {
        const id = newId();
        creates.push({ id, draft: decision.issue });
        history.push({ issueId: id, source: 'engine', kind: 'created', changes: { status: 'open' } });
        outbox.push({
          kind: 'issue.created',
          aggregate: `issue:${id}`,
          msgId: `issue.created:${id}`,
          payload: {
            event: 'issue.created',
            occurred_at: at,
            issue: issuePayload(id, this.environment, { ...decision.issue, siteId: key.siteId }),
          },
        });
      } else if (decision.action === 'update' && rec) {
        const c = decision.changes;
        const next = {
          id: rec.id,
          status: c.status ?? rec.status,
          selector: c.selector ?? rec.selector,
          label: c.label !== undefined ? c.label : rec.label,
          signalCount: c.signalCount ?? rec.signalCount,
          affectedSessions: c.affectedSessions ?? rec.affectedSessions,
          severity: c.severity ?? rec.severity,
          lastSignalAt: c.lastSignalAt !== undefined ? c.lastSignalAt : rec.lastSignalAt,
          evidence: c.evidence,
        };
        updates.push({ ...next, status: c.status ?? null, signallingAgainAt: c.signallingAgainAt ?? null });
        if (decision.notify) {
          const changes = publicChanges(c);
          history.push({ issueId: rec.id, source: 'engine', kind: c.status ?? 'worsened', changes });
          outbox.push({
            kind: 'issue.updated',
            // The outbox row keeps this id through relay retries; the stream drops a second publish of it.
            aggregate: `issue:${rec.id}`,
            msgId: `issue.updated:${rec.id}:${newId()}`,
            payload: {
              event: 'issue.updated',
              occurred_at: at,
              changes,
              issue: issuePayload(rec.id, this.environment, {
                ...next,
                siteId: rec.siteId,
                page: rec.page,
                signalType: rec.signalType,
                title: rec.title,
              }),
            },
          });
        }
      }
    }
    await insertIssues(db, this.environment, creates, now);
    await updateIssues(db, updates, now);
    await insertIssueUpdates(db, history);
    await enqueueOutbox(db, outbox);
    await this.writeElementsOf(db, keys, now, reader);
    return outbox.length;
  }

  /** Recomputes the element aggregates of the (page, selector) pairs these clusters belong to. */
  private async writeElementsOf(
    db: Db,
    keys: readonly ClusterKey[],
    now: number,
    reader: ClusterReader,
  ): Promise<void> {
    const touched = new Map<string, { siteId: string; page: string; selector: string }>();
    for (const k of keys) if (k.selector !== '') touched.set(`${k.siteId}\u0000${k.page}\u0000${k.selector}`, k);
    const upserts: ElementAggregate[] = [];
    const removals: { siteId: string; page: string; canonicalSelector: string }[] = [];
    for (const t of touched.values()) {
      const parts = reader.elementParts(t.siteId, t.page, t.selector, now);
      if (parts !== null) upserts.push(aggregateElement(parts));
      else removals.push({ siteId: t.siteId, page: t.page, canonicalSelector: t.selector });
    }
    await writeElements(db, this.environment, upserts, removals, now);
  }
}

/** The changed fields in the API's names (snake_case). */
function publicChanges(c: IssueChanges): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (c.status !== undefined) out.status = c.status;
  if (c.signalCount !== undefined) out.signal_count = c.signalCount;
  if (c.affectedSessions !== undefined) out.affected_sessions = c.affectedSessions;
  if (c.severity !== undefined) out.severity = c.severity;
  if (c.selector !== undefined) out.element_selector = c.selector;
  if (c.label !== undefined) out.label = c.label;
  return out;
}
