import type { Cluster } from './cluster-model.ts';
import { work, type Seen } from './last-seen.ts';
import { compareStrings } from './util.ts';

/** Evidence sessions: the top sessions of a cluster, kept exact across batches and evictions. */

/** One session's share of a cluster over a window (times absolute). */
export interface SessionDay {
  readonly count: number;
  /** Epoch ms of its latest signal. */
  readonly lastTs: number;
}

/** One session's share of a cluster over the window: the evidence rows of an issue. */
export interface EvidenceSession {
  readonly sessionId: string;
  /** Signals of this cluster from the session in the window. */
  readonly signals: number;
  /** Epoch ms of the session's latest signal in the cluster. */
  readonly lastSignalAt: number;
}

/** Evidence sessions kept on an issue: enough to replay a pattern, few enough to read. */
export const EVIDENCE_SESSIONS = 10;

/** Orders evidence: signals desc, latest signal desc, session id asc. */
export function compareEvidence(a: EvidenceSession, b: EvidenceSession): number {
  return b.signals - a.signals || b.lastSignalAt - a.lastSignalAt || compareStrings(a.sessionId, b.sessionId);
}

/** The first EVIDENCE_SESSIONS of `rows` by `compareEvidence`. */
const topRows = (rows: Iterable<EvidenceSession>): EvidenceSession[] =>
  [...rows].sort(compareEvidence).slice(0, EVIDENCE_SESSIONS);

/** A batch's session laid over a large cluster: its committed signals and latest signal (or none), and the batch's. */
export interface BatchSession {
  readonly id: string;
  readonly committed: Seen | undefined;
  readonly batch: Seen;
}

/**
 * A committed top (`rows`, exact) with a batch's sessions laid over it, ranked, the first `limit`: counts only grow,
 * so the new top is among the old and the batch's sessions. A batch session's old row can be in the top only with
 * its committed counts, so ids are compared only for rows whose counts match: the top's ids are not read.
 */
export function topWithBatch(
  rows: EvidenceSession[],
  sessions: readonly BatchSession[],
  limit: number,
): EvidenceSession[] {
  for (const { id, committed, batch } of sessions) {
    work.steps++;
    if (committed !== undefined) {
      const k = rows.findIndex(
        (r) => r.signals === committed.n && r.lastSignalAt === committed.t && r.sessionId === id,
      );
      if (k >= 0) rows.splice(k, 1);
    }
    rows.push({
      sessionId: id,
      signals: (committed?.n ?? 0) + batch.n,
      lastSignalAt: Math.max(committed?.t ?? -Infinity, batch.t),
    });
  }
  return rows.sort(compareEvidence).slice(0, limit);
}

/** Recomputes a cluster's top from all its sessions: at the index's upgrade and after an eviction, never per batch. */
export function rebuildTop(c: Cluster): void {
  if (c.index === null || !c.index.isLarge) {
    c.top = null;
    return;
  }
  const rows: EvidenceSession[] = [];
  c.index.forEach((sessionId, lastSignalAt, signals) => rows.push({ sessionId, signals, lastSignalAt }));
  c.top = topRows(rows);
}

/** Top `limit` sessions by signals desc, then latest signal desc, then session id asc. */
export function topEvidence(
  sessions: ReadonlyMap<string, SessionDay>,
  limit: number = EVIDENCE_SESSIONS,
): EvidenceSession[] {
  return [...sessions]
    .map(([sessionId, s]) => ({ sessionId, signals: s.count, lastSignalAt: s.lastTs }))
    .sort(compareEvidence)
    .slice(0, limit);
}
