import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { keysetPages, pageAfter, tsKey } from './keyset-pages.ts';
import type { EvidenceRow, IssueRow } from '../../shared/db/tables/issues.table.ts';
import type { Environment } from '../../shared/domain/deploy-verification.ts';
import type { ClusterKey, EvidenceSession, IssueDraft, IssueRecord, IssueStatus } from '../engine/clustering.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** A stored issue with the key and fields the live path needs. */
export interface StoredIssue extends IssueRecord {
  siteId: string;
  page: string;
  clusterSelector: string;
  signalType: string;
  title: string;
}

const toEvidenceJson = (ev: readonly EvidenceSession[]) =>
  JSON.stringify(
    ev.map((e) => ({
      session_id: e.sessionId,
      signals: e.signals,
      last_signal_at: new Date(e.lastSignalAt).toISOString(),
    })),
  );
const fromEvidenceJson = (rows: readonly EvidenceRow[]): EvidenceSession[] =>
  rows.map((e) => ({ sessionId: e.session_id, signals: e.signals, lastSignalAt: Date.parse(e.last_signal_at) }));

/** The columns both issue loaders below read of every issue: its key and state. */
const STORED_ISSUE_COLUMNS = [
  'id',
  'site_id',
  'page',
  'cluster_selector',
  'selector',
  'signal_type',
  'status',
  'frozen',
  'title',
  'label',
  'severity',
  'last_signal_at',
] as const;
type StoredIssueRow = Pick<IssueRow, (typeof STORED_ISSUE_COLUMNS)[number]>;

/** Those columns as the engine names them. */
function storedIssueOf(r: StoredIssueRow) {
  return {
    id: r.id,
    siteId: r.site_id,
    page: r.page,
    clusterSelector: r.cluster_selector,
    selector: r.selector,
    signalType: r.signal_type,
    status: r.status as IssueStatus,
    frozen: r.frozen,
    title: r.title,
    label: r.label,
    severity: r.severity,
    lastSignalAt: new Date(r.last_signal_at).getTime(),
  };
}

const keyOf = (siteId: string, page: string, selector: string, type: string) =>
  `${siteId}\u0000${page}\u0000${selector}\u0000${type}`;
export const issueKeyString = (k: ClusterKey) => keyOf(k.siteId, k.page, k.selector, k.signalType);

/**
 * The issues of these cluster keys in one environment with their evidence, locked for this transaction
 * (`for update`) so a concurrent manual change (PATCH) and the engine's update serialize.
 */
export async function loadIssuesForKeys(
  db: Db,
  environment: Environment,
  keys: readonly ClusterKey[],
): Promise<Map<string, StoredIssue>> {
  const out = new Map<string, StoredIssue>();
  if (keys.length === 0) return out;
  // Raw: kysely has no typed join on unnest(...) as k(columns), the one statement that finds a batch's issues by key.
  const { rows } = await sql<
    StoredIssueRow &
      Pick<IssueRow, 'signal_count' | 'affected_sessions' | 'resolved_at' | 'signalling_again_at' | 'evidence'>
  >`
    select i.id, i.site_id, i.page, i.cluster_selector, i.selector, i.signal_type, i.label, i.title, i.status, i.frozen,
           i.signal_count, i.affected_sessions, i.severity::float8 as severity, i.last_signal_at, i.resolved_at, i.signalling_again_at, i.evidence
    from ux_issues i
    join unnest(${keys.map((k) => k.siteId)}::uuid[], ${keys.map((k) => k.page)}::text[], ${keys.map((k) => k.selector)}::text[],
                ${keys.map((k) => k.signalType)}::text[]) as k(site_id, page, cluster_selector, signal_type)
      on i.site_id = k.site_id and i.page = k.page and i.cluster_selector = k.cluster_selector and i.signal_type = k.signal_type
    where i.environment = ${environment}
    order by i.id
    for update of i`.execute(db);
  for (const r of rows)
    out.set(keyOf(r.site_id, r.page, r.cluster_selector, r.signal_type), {
      ...storedIssueOf(r),
      signalCount: r.signal_count,
      affectedSessions: r.affected_sessions,
      resolvedAt: r.resolved_at ? new Date(r.resolved_at).getTime() : null,
      evidence: fromEvidenceJson(r.evidence),
      signallingAgainAt: r.signalling_again_at ? new Date(r.signalling_again_at).getTime() : null,
    });
  return out;
}

/** A new issue row with its id (the keeper assigns ids so notifications can name them before the insert). */
export interface NewIssue {
  id: string;
  draft: IssueDraft;
}

/**
 * Inserts new issues and their evidence. Column arrays (unnest) keep the parameter count fixed: a multi-row
 * VALUES list would pass PostgreSQL's 65,535-parameter limit at a few thousand issues.
 */
export async function insertIssues(
  db: Db,
  environment: Environment,
  issues: readonly NewIssue[],
  now: number,
): Promise<void> {
  if (issues.length === 0) return;
  const at = new Date(now).toISOString();
  const c = <T>(f: (i: NewIssue) => T) => issues.map(f);
  const iso = (v: number) => new Date(v).toISOString();
  await sql`
    insert into ux_issues (id, site_id, page, cluster_selector, selector, signal_type, label, title, hypothesis, signal_count,
                           affected_sessions, severity, status, first_signal_at, last_signal_at, evidence, created_at, updated_at, environment)
    select *, ${at}::timestamptz, ${at}::timestamptz, ${environment} from unnest(
      ${c((i) => i.id)}::uuid[], ${c((i) => i.draft.key.siteId)}::uuid[], ${c((i) => i.draft.page)}::text[], ${c((i) => i.draft.key.selector)}::text[],
      ${c((i) => i.draft.selector)}::text[], ${c((i) => i.draft.signalType)}::text[], ${c((i) => i.draft.label)}::text[], ${c((i) => i.draft.title)}::text[],
      ${c((i) => i.draft.hypothesis)}::text[], ${c((i) => i.draft.signalCount)}::int[], ${c((i) => i.draft.affectedSessions)}::int[],
      ${c((i) => i.draft.severity)}::real[], ${c((i) => i.draft.status)}::text[], ${c((i) => iso(i.draft.firstSignalAt))}::timestamptz[],
      ${c((i) => iso(i.draft.lastSignalAt))}::timestamptz[], ${c((i) => toEvidenceJson(i.draft.evidence))}::jsonb[])`.execute(
    db,
  );
}

/** An issue's fields after the engine's changes (the status only through the nightly triage's auto-resolve). */
export interface IssueUpdateRow {
  id: string;
  /**
   * Set only when the engine itself changes the status (regressed, auto-resolved); null keeps the stored one, so a
   * user's PATCH committed meanwhile is never reverted by an engine write of the other fields.
   */
  status: string | null;
  selector: string;
  label: string | null;
  signalCount: number;
  affectedSessions: number;
  severity: number;
  lastSignalAt: number | null;
  /** Replaced when present. */
  evidence?: readonly EvidenceSession[];
  /** Set when the live rule saw the closed issue signalling again; null keeps the stored one. */
  signallingAgainAt?: number | null;
}

/** Applies the engine's updates to many issues in one statement. */
export async function updateIssues(db: Db, rows: readonly IssueUpdateRow[], now: number): Promise<void> {
  if (rows.length === 0) return;
  const c = <T>(f: (r: IssueUpdateRow) => T) => rows.map(f);
  await sql`
    update ux_issues u set
      status = coalesce(v.status, u.status), selector = v.selector, label = v.label, signal_count = v.signal_count,
      affected_sessions = v.affected_sessions, severity = v.severity, evidence = coalesce(v.evidence, u.evidence),
      last_signal_at = coalesce(v.last_signal_at, u.last_signal_at), signalling_again_at = coalesce(v.signalling_again_at, u.signalling_again_at),
      updated_at = ${new Date(now).toISOString()}::timestamptz
    from unnest(${c((r) => r.id)}::uuid[], ${c((r) => r.status)}::text[], ${c((r) => r.selector)}::text[], ${c((r) => r.label)}::text[],
                ${c((r) => r.signalCount)}::int[], ${c((r) => r.affectedSessions)}::int[], ${c((r) => r.severity)}::real[],
                ${c((r) => (r.lastSignalAt === null ? null : new Date(r.lastSignalAt).toISOString()))}::timestamptz[],
                ${c((r) => (r.evidence === undefined ? null : toEvidenceJson(r.evidence)))}::jsonb[],
                ${c((r) => (r.signallingAgainAt == null ? null : new Date(r.signallingAgainAt).toISOString()))}::timestamptz[])
      as v(id, status, selector, label, signal_count, affected_sessions, severity, last_signal_at, evidence, signalling_again_at)
    where u.id = v.id`.execute(db);
}

/** Issues' history has one writer, shared with the API (a person's changes). */
export { insertIssueUpdates } from '../../shared/db/queries/issue-updates.queries.ts';

/** Signal rows since `since` of one site and environment: what rebuilds the cluster state after a restart. */
export async function* loadSignalEvents(
  db: Db,
  siteId: string,
  environment: Environment,
  since: number,
  chunkRows = 20_000,
) {
  const pages = keysetPages(
    chunkRows,
    (after) =>
      db
        .selectFrom('signals')
        .select(['event_id', 'session_id', 'ts', tsKey(), 'page', 'signal_type', 'selector', 'label'])
        .where('site_id', '=', siteId)
        .where('environment', '=', environment)
        .where('ts', '>=', new Date(since))
        .$call((q) => pageAfter(q, 'event_id', after, chunkRows))
        .execute(),
    (r) => r.event_id,
  );
  for await (const rows of pages)
    yield rows.map((r) => ({
      id: r.event_id,
      siteId,
      sessionId: r.session_id,
      type: 'signal' as const,
      ts: new Date(r.ts).getTime(),
      page: r.page,
      signal: r.signal_type,
      selector: r.selector ?? undefined,
      label: r.label ?? undefined,
    }));
}

/** Every issue of a site in one environment, as the nightly triage and the recompute read it. */
export async function loadSiteIssues(db: Db, siteId: string, environment: Environment, o: { lock?: boolean } = {}) {
  const rows = await db
    .selectFrom('ux_issues')
    .where('environment', '=', environment)
    .select([...STORED_ISSUE_COLUMNS, 'hypothesis', 'created_at'])
    .where('site_id', '=', siteId)
    .$if(o.lock === true, (q) => q.orderBy('id').forUpdate())
    .execute();
  return rows.map((r) => ({
    ...storedIssueOf(r),
    hypothesis: r.hypothesis,
    createdAt: new Date(r.created_at).getTime(),
  }));
}

/** Applies a triage action's fields. */
export async function applyTriageChanges(
  db: Db,
  id: string,
  c: { status?: string; mergedInto?: string; title?: string; hypothesis?: string; severity?: number },
  now: number,
): Promise<void> {
  const set: Record<string, unknown> = { updated_at: new Date(now) };
  if (c.status !== undefined) set.status = c.status;
  if (c.status === 'resolved') set.resolved_at = new Date(now);
  if (c.mergedInto !== undefined) set.merged_into = c.mergedInto;
  if (c.title !== undefined) set.title = c.title;
  if (c.hypothesis !== undefined) set.hypothesis = c.hypothesis;
  if (c.severity !== undefined) set.severity = c.severity;
  await db.updateTable('ux_issues').set(set).where('id', '=', id).execute();
}
