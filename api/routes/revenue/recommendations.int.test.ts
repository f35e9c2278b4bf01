import test from 'ava';
import { useTestDatabase } from '../../../shared/testing/database.ts';
import { insertOrg, provisionSite } from '../../../shared/tenancy/provision.ts';
import { insertIssueRow } from '../../../ops/testing/rows.ts';
import { siteRecommendations } from './recommendations.ts';

const handle = useTestDatabase(test, 'recommendations');

test('without revenue tracking the database ranks and cuts the fixes; the total counts every active issue', async (t) => {
  const db = handle.db;
  const orgId = await insertOrg(db, { name: 'o' });
  const { siteId } = await provisionSite(db, { orgId, name: 's', url: 'https://s.example' });
  // Ties on severity broken by affected sessions, then by id (#d's before #a's); resolved and staging issues are not
  // fixes of production.
  const rows = [
    { selector: '#a', severity: 30, affected_sessions: 4, id: '00000000-0000-4000-8000-000000000002' },
    { selector: '#b', severity: 50, affected_sessions: 1 },
    { selector: '#c', severity: 30, affected_sessions: 9 },
    { selector: '#d', severity: 30, affected_sessions: 4, id: '00000000-0000-4000-8000-000000000001' },
    { selector: '#e', severity: 10, affected_sessions: 99, status: 'regressed' as const },
    { selector: '#f', severity: 90, affected_sessions: 9, status: 'resolved' as const },
    { selector: '#g', severity: 95, affected_sessions: 9, environment: 'staging' as const },
  ];
  for (const r of rows) await insertIssueRow(db, siteId, { page: '/p', ...r });
  const all = await siteRecommendations(db, siteId, 'production', new Date(), 100);
  t.is(all.total, 5);
  t.deepEqual(
    all.recommendations.map((r) => [r.rank, r.element_selector]),
    [
      [1, '#b'],
      [2, '#c'],
      [3, '#d'],
      [4, '#a'],
      [5, '#e'],
    ],
  );
  const two = await siteRecommendations(db, siteId, 'production', new Date(), 2);
  t.deepEqual(two, { ...all, recommendations: all.recommendations.slice(0, 2) });
  const none = await siteRecommendations(db, siteId, 'staging', new Date(), 100);
  t.is(none.total, 1);
  const empty = await siteRecommendations(
    db,
    (await provisionSite(db, { orgId, name: 't', url: 'https://t.example' })).siteId,
    'production',
    new Date(),
    3,
  );
  t.like(empty, { total: 0, recommendations: [] });
});
