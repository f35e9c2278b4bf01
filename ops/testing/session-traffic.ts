import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson, postJson } from '../../shared/testing/http-client.ts';

/** One simulated visit: a page view at `at`, then its signals a second later. */
export interface SessionSpec {
  at: number;
  page?: string;
  signals?: { signal: string; selector: string; label: string }[];
  appVersion?: string;
  environment?: string;
}

export type Ev = Record<string, unknown>;

const iso = (ts: number) => new Date(ts).toISOString();
export const pageView = (page: string, ts = Date.now()): Ev => ({
  id: randomUUID(),
  type: 'page_view',
  ts: iso(ts),
  page,
});
export const signalEvent = (page: string, signal: string, ts = Date.now(), extra: Ev = {}): Ev => ({
  id: randomUUID(),
  type: 'signal',
  ts: iso(ts),
  page,
  signal,
  ...extra,
});

/**
 * Posts one session's events through ingest as one SDK batch (a desktop 1280×800 unless `context` says otherwise);
 * throws unless ingest accepts it.
 */
export async function ingestSession(
  baseUrl: string,
  key: string,
  events: Ev[],
  { sessionId = `s-${randomUUID()}`, context = {} }: { sessionId?: string; context?: Ev } = {},
): Promise<void> {
  const r = await postJson(
    `${baseUrl}/v1/ingest`,
    {
      session_id: sessionId,
      sent_at: iso(Date.now()),
      context: { device: 'desktop', viewport: { w: 1280, h: 800 }, ...context },
      events,
    },
    { authorization: `Bearer ${key}` },
  );
  if (r.status !== 202) throw new Error(`ingest ${r.status}: ${JSON.stringify(r.body)}`);
}

/** Sends sessions through ingest, a few at a time (each is one SDK batch); resolves to the events sent. */
export async function sendSessions(baseUrl: string, key: string, sessions: readonly SessionSpec[]): Promise<number> {
  let events = 0;
  for (let i = 0; i < sessions.length; i += 16) {
    await Promise.all(
      sessions.slice(i, i + 16).map(async (s) => {
        const page = s.page ?? '/checkout';
        const evs = [
          pageView(page, s.at),
          ...(s.signals ?? []).map((g, j) =>
            signalEvent(page, g.signal, s.at + 1000 + j, { selector: g.selector, label: g.label, x: 500, y: 500 }),
          ),
        ];
        await ingestSession(baseUrl, key, evs, {
          context: {
            ...(s.appVersion ? { app_version: s.appVersion } : {}),
            ...(s.environment ? { environment: s.environment } : {}),
          },
        });
        events += evs.length;
      }),
    );
  }
  return events;
}

/** `n` sessions spread evenly over [from, to). */
export const spread = (n: number, from: number, to: number, f: (i: number) => Omit<SessionSpec, 'at'>): SessionSpec[] =>
  Array.from({ length: n }, (_, i) => ({ at: from + Math.floor(((to - from) * i) / n), ...f(i) }));

/** The site's rows in `table`: the processor has consumed everything sent when the events equal what was sent. */
export async function siteRows(
  db: Kysely<Database>,
  table: 'events' | 'sessions' | 'signals',
  siteId: string,
): Promise<number> {
  const r = await sql<{
    n: number;
  }>`select count(*)::int as n from ${sql.table(table)} where site_id = ${siteId}`.execute(db);
  return r.rows[0].n;
}

/** Waits until the site has stored `sent` events (the processor has consumed everything sent). */
export const allEventsStored = (db: Kysely<Database>, siteId: string, sent: number, timeoutMs = 60_000) =>
  eventually(async () => (await siteRows(db, 'events', siteId)) === sent, { timeoutMs, stepMs: 200 });

/**
 * Records a deploy through the API as CI does, then moves its recording to `at`: tests and benches play days of
 * traffic in seconds. Resolves to the deploy's id; throws unless the API answers 201.
 */
export async function recordDeployAt(
  baseUrl: string,
  db: Kysely<Database>,
  secretKey: string,
  body: { version: string; description?: string },
  at: number,
): Promise<string> {
  const rec = await postJson(`${baseUrl}/v1/deploys`, body, { authorization: `Bearer ${secretKey}` });
  if (rec.status !== 201) throw new Error(`POST /v1/deploys ${rec.status}: ${rec.text}`);
  const id: string = rec.body.data.id;
  await backdateDeploy(db, id, at);
  return id;
}

/** Moves a recorded deploy's recording to `at`. */
export const backdateDeploy = (db: Kysely<Database>, id: string, at: number) =>
  db
    .updateTable('deploys')
    .set({ recorded_at: new Date(at) })
    .where('id', '=', id)
    .execute();

/**
 * A tenant's site as the deploy tests drive it: sessions through ingest (each `send` waits until everything sent
 * so far is stored), reads of the query API's `data`, the issue on a selector once it is open, deploys at a time.
 */
export function trafficSite(
  stack: { baseUrl: string; infra: { database: { db: Kysely<Database> } } },
  tenant: { siteId: string; publishableKey: string; secretKey: string },
  storeTimeoutMs?: number,
) {
  const db = stack.infra.database.db;
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const read = async (path: string) => (await getJson(`${stack.baseUrl}${path}`, auth)).body.data;
  let sent = 0;
  return {
    db,
    read,
    async send(sessions: readonly SessionSpec[]): Promise<void> {
      sent += await sendSessions(stack.baseUrl, tenant.publishableKey, sessions);
      await allEventsStored(db, tenant.siteId, sent, storeTimeoutMs);
    },
    issueOn: (selector: string) =>
      eventually(
        async () =>
          (await read(`/v1/query/issues?site_id=${tenant.siteId}`)).issues.find(
            (i: { selector: string }) => i.selector === selector,
          ),
        { timeoutMs: 30_000 },
      ),
    deployAt: (version: string, at: number) => recordDeployAt(stack.baseUrl, db, tenant.secretKey, { version }, at),
  };
}
