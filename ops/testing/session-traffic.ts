import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { postJson } from '../../shared/testing/http-client.ts';

/** One simulated visit: a page view at `at`, then its signals a second later. */
export interface SessionSpec {
  at: number;
  page?: string;
  signals?: { signal: string; selector: string; label: string }[];
  appVersion?: string;
  environment?: string;
}

/** Sends sessions through ingest, a few at a time (each is one SDK batch); resolves to the events sent. */
export async function sendSessions(baseUrl: string, key: string, sessions: readonly SessionSpec[]): Promise<number> {
  let events = 0;
  for (let i = 0; i < sessions.length; i += 16) {
    await Promise.all(
      sessions.slice(i, i + 16).map(async (s) => {
        const page = s.page ?? '/checkout';
        const evs: Record<string, unknown>[] = [
          { id: randomUUID(), type: 'page_view', ts: new Date(s.at).toISOString(), page },
        ];
        for (const [j, g] of (s.signals ?? []).entries()) {
          evs.push({
            id: randomUUID(),
            type: 'signal',
            ts: new Date(s.at + 1000 + j).toISOString(),
            page,
            signal: g.signal,
            selector: g.selector,
            label: g.label,
            x: 500,
            y: 500,
          });
        }
        const context = {
          device: 'desktop',
          viewport: { w: 1280, h: 800 },
          ...(s.appVersion ? { app_version: s.appVersion } : {}),
          ...(s.environment ? { environment: s.environment } : {}),
        };
        const r = await postJson(
          `${baseUrl}/v1/ingest`,
          { session_id: `s-${randomUUID()}`, sent_at: new Date().toISOString(), context, events: evs },
          { authorization: `Bearer ${key}` },
        );
        if (r.status !== 202) throw new Error(`ingest ${r.status}: ${JSON.stringify(r.body)}`);
        events += evs.length;
      }),
    );
  }
  return events;
}

/** `n` sessions spread evenly over [from, to). */
export const spread = (n: number, from: number, to: number, f: (i: number) => Omit<SessionSpec, 'at'>): SessionSpec[] =>
  Array.from({ length: n }, (_, i) => ({ at: from + Math.floor(((to - from) * i) / n), ...f(i) }));

/** Events the site has stored (the processor has consumed everything sent when it equals what was sent). */
export async function storedEventCount(db: Kysely<Database>, siteId: string): Promise<number> {
  const r = await sql<{ n: number }>`select count(*)::int as n from events where site_id = ${siteId}`.execute(db);
  return r.rows[0].n;
}
