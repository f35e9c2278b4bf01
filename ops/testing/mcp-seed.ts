/**
 * Test and bench data for the MCP server: the demo's traffic (ops/demo.ts journeys) sent through ingest and processed,
 * plus two measured deploys, one passing and one failing, and an active alert of a rule routed to the `mcp` channel.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { demoBatch } from '../demo.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { postJson } from '../../shared/testing/http-client.ts';
import { insertAlertRow } from './alert-row.ts';
import { allEventsStored } from './session-traffic.ts';

export interface SeededSite {
  pass: { id: string; version: string };
  fail: { id: string; version: string };
  /** The most severe active issue. */
  issueId: string;
  /** The worst page. */
  page: string;
}

/** Sends `sessions` demo visitors to `baseUrl`'s ingest with `publishableKey`; resolves to the events it accepted. */
export async function sendDemoTraffic(baseUrl: string, publishableKey: string, sessions: number): Promise<number> {
  let accepted = 0;
  for (let s = 0; s < sessions; s++) {
    const r = await postJson(`${baseUrl}/v1/ingest`, demoBatch(s), { authorization: `Bearer ${publishableKey}` });
    if (r.status !== 202) throw new Error(`ingest answered ${r.status}: ${JSON.stringify(r.body)}`);
    accepted += (r.body as { data: { accepted: number } }).data.accepted;
  }
  return accepted;
}

/**
 * The demo traffic processed (issues and page scores written), then the two deploys inserted measured and frozen (so
 * the processor leaves them as they are): `pass` fell by 2 points over an hour of traffic, `fail` rose by 25 (past
 * the default spike threshold of 20).
 */
export async function seedMcpSite(o: {
  baseUrl: string;
  db: Kysely<Database>;
  siteId: string;
  publishableKey: string;
  sessions?: number;
  tick(): Promise<void>;
}): Promise<SeededSite> {
  const accepted = await sendDemoTraffic(o.baseUrl, o.publishableKey, o.sessions ?? 60);
  // Every accepted event stored first: tests compare two reads, which must not straddle a processor batch.
  await allEventsStored(o.db, o.siteId, accepted);
  /** `read`'s first answer after a scoring tick. */
  const afterTicks = <T>(read: () => Promise<T | undefined>) =>
    eventually(
      async () => {
        await o.tick();
        return read();
      },
      { timeoutMs: 60_000, stepMs: 250 },
    );
  const issue = await afterTicks(() =>
    o.db
      .selectFrom('ux_issues')
      .select(['id', 'page'])
      .where('site_id', '=', o.siteId)
      .where('status', '=', 'open')
      .orderBy('severity', 'desc')
      .executeTakeFirst(),
  );
  const page = await afterTicks(() =>
    o.db
      .selectFrom('page_scores')
      .select('page')
      .where('site_id', '=', o.siteId)
      .orderBy('score', 'desc')
      .executeTakeFirst(),
  );
  const now = Date.now();
  const deploy = async (version: string, agoMs: number, before: number, after: number) => {
    const id = randomUUID();
    const recorded = new Date(now - agoMs);
    await o.db
      .insertInto('deploys')
      .values({
        id,
        site_id: o.siteId,
        environment: 'production',
        version,
        commit_sha: null,
        url: null,
        description: null,
        confusion_before: before,
        confusion_after: after,
        delta: after - before,
        recorded_at: recorded,
        cohort: JSON.stringify({
          kind: 'time_window',
          from: new Date(recorded.getTime() + 60_000).toISOString(),
          to: new Date(recorded.getTime() + 61 * 60_000).toISOString(),
          sessions: 400,
        }),
        measured_until: new Date(recorded.getTime() + 61 * 60_000),
        frozen_at: new Date(recorded.getTime() + 61 * 60_000),
        idempotency_key: null,
        created_by: 'seed',
      })
      .execute();
    return { id, version };
  };
  const pass = await deploy('2.3.0', 4 * 3_600_000, 30, 28);
  const fail = await deploy('2.4.0', 2 * 3_600_000, 28, 53);
  const rule = await o.db
    .insertInto('alert_rules')
    .values({
      id: randomUUID(),
      site_id: o.siteId,
      name: 'checkout spike',
      trigger_type: 'spike',
      threshold: 20,
      cooldown_minutes: 60,
      channels: ['mcp'],
      page_pattern: '/checkout',
      slack_channel: null,
      enabled: true,
      last_fired_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await insertAlertRow(o.db, o.siteId, {
    rule_id: rule.id,
    rule_name: 'checkout spike',
    score_before: 28,
    score_after: 53,
    details: JSON.stringify({}),
    triggered_at: new Date(now - 100 * 60_000),
  });
  return { pass, fail, issueId: issue.id, page: page.page };
}
