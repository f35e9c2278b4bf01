import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../database.ts';

type Db = Kysely<Database> | Transaction<Database>;

export interface OrgUsage {
  plan: string;
  siteLimit: number | null;
  sessionLimit: number | null;
  trialEndsAt: Date | null;
  /** Live (not deleted) sites. */
  sites: number;
  /** Sessions started since `since` on any of the org's sites, deleted ones included. */
  sessions: number;
}

/** The org's plan, limits and usage; null when the org does not exist. */
export async function orgUsage(db: Db, orgId: string, since: Date): Promise<OrgUsage | null> {
  // Raw: the org row and its usage counts as correlated scalar subqueries, one statement (one round trip).
  const { rows } = await sql<{
    plan: string;
    site_limit: number | null;
    session_limit: number | null;
    trial_ends_at: Date | null;
    sites: number;
    sessions: number;
  }>`
    select o.plan, o.site_limit, o.session_limit, o.trial_ends_at,
           (select count(*)::int from sites s where s.org_id = o.id and s.deleted_at is null) as sites,
           (select count(*)::int from sessions x join sites s on s.id = x.site_id
             where s.org_id = o.id and x.started_at >= ${since}) as sessions
    from orgs o where o.id = ${orgId}`.execute(db);
  const r = rows[0];
  return r
    ? {
        plan: r.plan,
        siteLimit: r.site_limit,
        sessionLimit: r.session_limit,
        trialEndsAt: r.trial_ends_at,
        sites: r.sites,
        sessions: r.sessions,
      }
    : null;
}

/** Locks the org row for the rest of the transaction: concurrent site creations of one org count one at a time. */
export async function lockOrg(db: Transaction<Database>, orgId: string): Promise<boolean> {
  const { rows } = await sql`select id from orgs where id = ${orgId} for update`.execute(db);
  return rows.length === 1;
}
