import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { Logger } from '../../shared/logger.ts';
import { planTriage, type TriageIssue } from '../engine/triage.ts';
import { utcDate } from '../engine/time.ts';
import { applyTriageChanges, insertIssueUpdates, loadSiteIssues } from '../store/issues.store.ts';
import { newId } from '../../shared/ids.ts';
import { enqueueOutbox } from '../../shared/notify/outbox.ts';
import { ENVIRONMENTS, type Environment } from '../../shared/domain/deploy-verification.ts';

/** What the triage reads of an environment's live state: page traffic and the cluster's sessions in the 24 h window. */
export interface TriageLiveState {
  pageSessions(siteId: string, page: string): number;
  windowAffectedSessions(siteId: string, page: string, clusterSelector: string, signalType: string): number;
}

/**
 * Runs the nightly triage of one site for the UTC day of `now`, once: the job_runs row is inserted in the
 * same transaction as the changes, so a second processor (or a restart) finds it and skips, and a crash
 * mid-way leaves no row and the triage runs again. Each environment's issues are triaged on their own (a staging
 * issue is never merged into a production one). Returns the number of issues changed, or null if it had run.
 */
export async function runSiteTriage(
  db: Kysely<Database>,
  siteId: string,
  now: number,
  liveOf: (environment: Environment) => TriageLiveState,
): Promise<number | null> {
  return db.transaction().execute(async (trx) => {
    const claimed = await trx
      .insertInto('job_runs')
      .values({ job: 'triage', scope: siteId, period: utcDate(now), ran_at: new Date(now) })
      .onConflict((oc) => oc.doNothing())
      .returning('job')
      .executeTakeFirst();
    if (claimed === undefined) return null;
    let changed = 0;
    for (const environment of ENVIRONMENTS)
      changed += await triageEnvironment(trx, siteId, environment, now, liveOf(environment));
    return changed;
  });
}

async function triageEnvironment(
  trx: Transaction<Database>,
  siteId: string,
  environment: Environment,
  now: number,
  live: TriageLiveState,
): Promise<number> {
  // Locked until the triage commits (in id order): a PATCH under way finishes first and the triage plans on its
  // result, or waits for the triage and applies on top of it. The triage never writes over a person's change.
  const rows = await loadSiteIssues(trx, siteId, environment, { lock: true });
  const issues: TriageIssue[] = rows.map((r) => ({
    ...r,
    pageSessions: live.pageSessions(r.siteId, r.page),
    windowAffectedSessions: live.windowAffectedSessions(r.siteId, r.page, r.clusterSelector, r.signalType),
  }));
  const actions = planTriage(issues, now);
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const a of actions) {
    await applyTriageChanges(trx, a.issueId, a.changes, now);
    const changes = {
      ...(a.changes.status !== undefined ? { status: a.changes.status } : {}),
      ...(a.changes.mergedInto !== undefined ? { merged_into: a.changes.mergedInto } : {}),
      ...(a.changes.title !== undefined ? { title: a.changes.title } : {}),
      ...(a.changes.hypothesis !== undefined ? { hypothesis: a.changes.hypothesis } : {}),
      ...(a.changes.severity !== undefined ? { severity: a.changes.severity } : {}),
    };
    await insertIssueUpdates(trx, [{ issueId: a.issueId, source: 'triage', kind: a.kind, changes, reason: a.reason }]);
    const r = byId.get(a.issueId)!;
    await enqueueOutbox(trx, [
      {
        kind: 'issue.updated',
        aggregate: `issue:${a.issueId}`,
        msgId: `issue.updated:${a.issueId}:${newId()}`,
        payload: {
          event: 'issue.updated',
          occurred_at: new Date(now).toISOString(),
          reason: a.reason,
          changes,
          issue: {
            id: r.id,
            site_id: r.siteId,
            environment,
            page: r.page,
            element_selector: r.selector,
            signal_type: r.signalType,
            title: a.changes.title ?? r.title,
            status: a.changes.status ?? r.status,
            severity: a.changes.severity ?? r.severity,
          },
        },
      },
    ]);
  }
  return actions.length;
}

/**
 * The nightly schedule: at or after `hourUtc` each UTC day, triages every owned site once.
 * Checked on the processor's tick; the clock is injected so tests can move time.
 */
export async function runDueTriage(
  db: Kysely<Database>,
  siteIds: readonly string[],
  now: number,
  hourUtc: number,
  live: (environment: Environment) => TriageLiveState,
  log: Logger,
): Promise<void> {
  if (new Date(now).getUTCHours() < hourUtc) return;
  for (const siteId of siteIds) {
    // One site's failure stays its own: its transaction (job_runs row included) rolled back, so the next tick tries
    // it again, while the other sites' triage, and the deploy looks and alert rules after it, run now.
    try {
      const changed = await runSiteTriage(db, siteId, now, live);
      if (changed !== null) log.info({ siteId, changed }, 'nightly triage');
    } catch (err) {
      log.error({ err, siteId }, 'nightly triage of a site failed; it is tried again at the next tick');
    }
  }
}
