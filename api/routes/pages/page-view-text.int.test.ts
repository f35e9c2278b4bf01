import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { useTestDatabase } from '../../../shared/testing/database.ts';
import { useResource } from '../../../shared/testing/lifecycle.ts';
import { openEmbeddedTestDatabase } from '../../../shared/testing/embedded-template.ts';
import { insertOrg, provisionSite } from '../../../shared/tenancy/provision.ts';
import { hourlyScoreRows, writeHourly } from '../../../ops/testing/page-score-rows.ts';
import { seeded } from '../../../shared/seeded-random.ts';
import { round1 } from '../../../shared/domain/score-summary.ts';
import { ACTIVE_STATUSES, ISSUE_STATUSES } from '../../../shared/domain/issue-status.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { issuesOfPageJson, issuesOfPageText, type IssueFields } from '../../read-models/issues.queries.ts';
import { presentIssue } from '../../read-models/issues.presenter.ts';
import { pageElementsJson, pageElementsText, type PageElementFields } from '../../read-models/elements.queries.ts';
import { presentPageElement } from '../../read-models/elements.presenter.ts';
import { fromDocument } from '../../read-models/deploys.queries.ts';
import { presentDeploy } from '../../read-models/deploys.presenter.ts';
import { pageBudget } from './budget.ts';
import { presentPage } from './page.presenter.ts';
import { PAGE_ELEMENTS, PAGE_ISSUES, pageRead } from './page.queries.ts';
import { PAGE_DEPLOYS, PAGE_HISTORY_DAYS, pageView, pageViewText } from './page.routes.ts';

// The page view's answer text, its issues and elements written by the database (issuesOfPageText, pageElementsText),
// against JSON.stringify of presentPage over the same rows read as values: byte for byte, with texts JSON escapes
// (quotes, backslashes, control characters, U+2028, non-ASCII, astral), nulls, empty lists and signals, fractional
// and integer scores (halves, negative, -0, float4 values), times with microseconds. On PostgreSQL and embedded.

const handles = {
  postgres: useTestDatabase(test, 'page_view_text'),
  pglite: useResource(test, openEmbeddedTestDatabase, (h) => h.close()),
};

const NOW = Date.parse('2026-03-15T12:34:56.789Z');
const HOUR = 3_600_000;
const PAGES = ['/p', '/a"b\\c', '/ü 💥', '/empty'];
const TEXTS = [
  '',
  'a"b\\c',
  'tab\there\nnew\r\u0001\u001f\u007f',
  'é 💥 \u2028\u2029',
  '</script>',
  '{"x": 1, "y": 2}',
];
/** Scores a presenter rounds to one decimal: halves, float4 neighbours of halves, negative ones, -0, large ones. */
const SCORES = [0, -0, 0.05, 0.15, 0.25, 0.35, 2.45, 99.95, 12.34999, -0.04, -0.05, -2.25, 1e-5, 1234567.8, 100, 7];

/** Random text for the columns: any code point but NUL (PostgreSQL text has none). */
const textOf = (rand: () => number, i: number) =>
  rand() < 0.5
    ? TEXTS[i % TEXTS.length]
    : fc.sample(fc.string({ unit: 'binary', maxLength: 12 }), { numRuns: 1, seed: i })[0].replaceAll('\u0000', '');
const timeOf = (rand: () => number) =>
  `${new Date(NOW - Math.floor(rand() * 40 * 86_400_000)).toISOString().slice(0, 23)}${Math.floor(rand() * 1000)
    .toString()
    .padStart(3, '0')}Z`;

async function seed(db: Kysely<Database>, siteId: string): Promise<void> {
  const rand = seeded(25);
  const issues: Record<string, unknown>[] = [];
  const elements: Record<string, unknown>[] = [];
  for (const environment of ['production', 'staging'])
    for (const page of PAGES.filter((p) => p !== '/empty'))
      for (let i = 0; i < 60; i++) {
        const resolved = rand() < 0.5 ? timeOf(rand) : null;
        issues.push({
          id: randomUUID(),
          site_id: siteId,
          page,
          cluster_selector: `c${i}`,
          selector: textOf(rand, i),
          signal_type: ['rage_click', 'dead_click', 'copy_text'][i % 3],
          label: rand() < 0.3 ? null : textOf(rand, i + 1),
          title: textOf(rand, i + 2),
          hypothesis: 'h',
          signal_count: Math.floor(rand() * 100_000),
          affected_sessions: Math.floor(rand() * 1000),
          severity: i < SCORES.length ? SCORES[i] : rand() < 0.5 ? Math.floor(rand() * 100) : rand() * 100,
          status: ISSUE_STATUSES[i % ISSUE_STATUSES.length],
          note: rand() < 0.5 ? null : textOf(rand, i + 3),
          assigned_to: rand() < 0.5 ? null : textOf(rand, i + 4),
          frozen: rand() < 0.3,
          merged_into: null,
          evidence: [],
          first_signal_at: timeOf(rand),
          last_signal_at: timeOf(rand),
          resolved_at: resolved,
          // Signalling again after, before, or within the same millisecond as the closure.
          signalling_again_at:
            rand() < 0.3 ? null : resolved !== null && rand() < 0.3 ? resolved.replace(/\dZ$/, '9Z') : timeOf(rand),
          created_at: timeOf(rand),
          updated_at: timeOf(rand),
          introduced_by_deploy: null,
          environment,
        });
        if (i < 55) {
          const signals: Record<string, number> = {};
          if (i % 7 !== 0)
            for (const type of ['rage_click', 'dead_click', 'form_abandon', 'disabled_element_attempt', 'x'])
              if (rand() < 0.6) signals[type] = Math.floor(rand() * (rand() < 0.1 ? 1e9 : 500));
          elements.push({
            site_id: siteId,
            page,
            cluster_selector: `c${i}`,
            selector: textOf(rand, i + 5),
            label: rand() < 0.3 ? null : textOf(rand, i + 6),
            signals,
            signal_count: Math.floor(rand() * 20),
            friction_score: i < SCORES.length ? SCORES[SCORES.length - 1 - i] : rand() * 100,
            dominant_signal: rand() < 0.3 ? null : 'rage_click',
            affected_users: 1,
            recommendation: null,
            last_signal_at: timeOf(rand),
            updated_at: timeOf(rand),
            environment,
          });
        }
      }
  await sql`insert into ux_issues select * from jsonb_populate_recordset(null::ux_issues, ${JSON.stringify(issues)}::jsonb)`.execute(
    db,
  );
  await sql`insert into page_elements select * from jsonb_populate_recordset(null::page_elements, ${JSON.stringify(elements)}::jsonb)`.execute(
    db,
  );
  for (const environment of ['production', 'staging'] as const)
    await writeHourly(
      db,
      environment,
      hourlyScoreRows(siteId, environment.length, PAGES, Math.floor(NOW / HOUR) * HOUR),
    );
}

const parsedJson = async <T>(db: Kysely<Database>, fragment: ReturnType<typeof sql>): Promise<T> =>
  JSON.parse((await sql<{ j: string }>`select (${fragment})::text as j`.execute(db)).rows[0].j) as T;

async function check(t: ExecutionContext, db: Kysely<Database>): Promise<void> {
  const orgId = await insertOrg(db, { name: 'page view text' });
  const { siteId } = await provisionSite(db, { orgId, name: 'a', url: 'https://a.example' });
  await seed(db, siteId);
  const at = new Date(NOW);
  let issues = 0;
  let elements = 0;
  for (const environment of ['production', 'staging'] as Environment[])
    for (const page of PAGES) {
      const scope = { site_id: siteId, environment, page };
      // Every status, so signalling_again is true for some (the page view lists only active issues).
      for (const statuses of [[...ACTIVE_STATUSES], [...ISSUE_STATUSES]]) {
        const want = await parsedJson<IssueFields[]>(db, issuesOfPageJson(db, scope, statuses, 200));
        const got = (await sql<{ j: string }>`select ${issuesOfPageText(db, scope, statuses, 200)} as j`.execute(db))
          .rows[0].j;
        t.is(got, JSON.stringify(want.map(presentIssue)), `${environment} ${page} issues`);
        issues += want.length;
      }
      const wantElements = await parsedJson<PageElementFields[]>(
        db,
        pageElementsJson(db, { ...scope, limit: PAGE_ELEMENTS }),
      );
      elements += wantElements.length;

      // The whole answer: JSON.stringify of presentPage over the issues and elements as values.
      const wantIssues = await parsedJson<IssueFields[]>(
        db,
        issuesOfPageJson(db, scope, [...ACTIVE_STATUSES], PAGE_ISSUES),
      );
      const read = await pageRead(db, scope, PAGE_HISTORY_DAYS, at, {
        since: new Date(NOW - PAGE_HISTORY_DAYS * 86_400_000),
        limit: PAGE_DEPLOYS,
      });
      const recent = fromDocument(read.deploys);
      const want = JSON.stringify(
        presentPage({
          page,
          score: read.score,
          history: read.history,
          issues: wantIssues,
          elements: wantElements,
          budget: pageBudget(read.rules, page, round1(read.score?.score ?? 0)),
          deploys: recent.rows.map((d) => presentDeploy(d, recent.related)),
          alerts: read.alerts,
        }),
      );
      const answer = await pageViewText(db, siteId, environment, page, at);
      t.is(answer?.text, want, `${environment} ${page}`);
      t.deepEqual(await pageView(db, siteId, environment, page, at), JSON.parse(want));
      t.is(
        (await sql<{ j: string }>`select ${pageElementsText(db, { ...scope, limit: PAGE_ELEMENTS })} as j`.execute(db))
          .rows[0].j,
        JSON.stringify(wantElements.map(presentPageElement)),
      );
    }
  t.true(issues > 300 && elements > 200, `${issues} issues, ${elements} elements compared`);
  t.is(await pageViewText(db, siteId, 'production', '/never', at), undefined);
}

test('postgres: the page view text is JSON.stringify of the presented page', async (t) => {
  await check(t, handles.postgres.db);
});

test('pglite: the page view text is JSON.stringify of the presented page', async (t) => {
  await check(t, handles.pglite.db);
});
