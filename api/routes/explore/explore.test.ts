import test from 'ava';
import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, DummyDriver } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { ValidationError } from '../../../shared/errors.ts';
import { parseInput } from '../../../shared/http/envelope.ts';
import { likePattern } from '../../read-models/explore.fields.ts';
import { listMatchingSessions, measureGroups, measureTotal } from '../../read-models/explore.queries.ts';
import { ExploreQuerySchema, GROUP_BYS, METRICS, type ExploreFilter } from '../../read-models/explore.schema.ts';

const refusal = (q: unknown) => {
  try {
    parseInput(ExploreQuerySchema, q, 'query');
  } catch (err) {
    if (err instanceof ValidationError)
      return { status: err.status, code: err.code, details: err.details as { path: string; message: string }[] };
    throw err;
  }
  return undefined;
};
const page = { field: 'page', op: 'is', value: '/a' };

test('defaults: 7 days, no filters, a list of 100', (t) => {
  t.deepEqual(ExploreQuerySchema.parse({}), { window_days: 7, filters: [], output: { mode: 'list', limit: 100 } });
  t.deepEqual(ExploreQuerySchema.parse({ output: { mode: 'list' } }).output, { mode: 'list', limit: 100 });
});

test('12 filters are accepted, 13 refused naming filters', (t) => {
  t.is(ExploreQuerySchema.parse({ filters: Array(12).fill(page) }).filters.length, 12);
  t.like(refusal({ filters: Array(13).fill(page) }), {
    status: 400,
    code: 'invalid_input',
    details: [{ path: 'filters', message: 'at most 12 filters' }],
  });
});

test('every refusal names its path', (t) => {
  const cases: [unknown, string][] = [
    [{ filters: [page, page, page, { field: 'page', op: 'near', value: 'x' }] }, 'filters[3].op'],
    [{ filters: [{ field: 'country', op: 'is', value: 'x' }] }, 'filters[0].field'],
    [{ filters: [{ field: 'confused', op: 'contains', value: true }] }, 'filters[0].op'],
    [{ filters: [{ field: 'converted', op: 'is', value: 'yes' }] }, 'filters[0].value'],
    [{ filters: [{ field: 'page', op: 'is', value: true }] }, 'filters[0].value'],
    [{ filters: [{ field: 'page', op: 'is', value: '' }] }, 'filters[0].value'],
    [{ filters: [{ field: 'page', op: 'is' }] }, 'filters[0].value'],
    [{ filters: [page, { ...page, extra: 1 }] }, 'filters[1].extra'],
    [{ output: { mode: 'table' } }, 'output.mode'],
    [{ output: { mode: 'measure', metric: 'sum' } }, 'output.metric'],
    [{ output: { mode: 'measure' } }, 'output.metric'],
    [{ output: { mode: 'measure', metric: 'count', group_by: 'country' } }, 'output.group_by'],
    [{ output: { mode: 'list', limit: 0 } }, 'output.limit'],
    [{ output: { mode: 'list', limit: 501 } }, 'output.limit'],
    [{ output: { mode: 'list', limit: 5, metric: 'count' } }, 'output.metric'],
    [{ window_days: 0 }, 'window_days'],
    [{ window_days: 91 }, 'window_days'],
    [{ window_days: 2.5 }, 'window_days'],
    [{ sort: 'ts' }, 'sort'],
  ];
  for (const [q, path] of cases) {
    const r = refusal(q);
    t.is(r?.status, 400, JSON.stringify(q));
    t.is(r?.details[0].path, path, JSON.stringify(q));
    t.true((r?.details[0].message.length ?? 0) > 0);
  }
});

// A kysely that compiles and never connects (DummyDriver answers no rows); its log shows each statement's text and parameters.
const sent: { sql: string; parameters: readonly unknown[] }[] = [];
const compiler = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
  log: (e) => void sent.push(e.query),
});

test('input never reaches the SQL text: every value is a parameter; the site and environment come from the scope', async (t) => {
  const hostile = `x'; drop table events; --" %_\\`;
  const filters: ExploreFilter[] = [
    { field: 'page', op: 'contains', value: hostile },
    { field: 'signal', op: 'is', value: hostile },
    { field: 'source', op: 'is_not', value: hostile },
    { field: 'event_type', op: 'contains', value: hostile },
    { field: 'confused', op: 'is', value: true },
    { field: 'converted', op: 'is_not', value: false },
  ];
  const scope = {
    siteId: '11111111-2222-3333-4444-555555555555',
    environment: 'staging' as const,
    from: new Date(0),
    to: new Date(1),
  };
  const runs: (() => Promise<unknown>)[] = [
    () => listMatchingSessions(compiler, scope, filters, 10),
    ...METRICS.map((m) => () => measureTotal(compiler, scope, filters, { mode: 'measure', metric: m })),
    ...GROUP_BYS.map((g) => () => measureGroups(compiler, scope, filters, 'count', g)),
  ];
  for (const run of runs) {
    sent.length = 0;
    await run().catch(() => undefined); // measureTotal throws on the dummy's empty answer, after sending
    const selects = sent.filter((q) => q.sql.startsWith('select'));
    t.is(selects.length, 1);
    t.true(
      sent.every((q) => q.sql.startsWith('select') || /^set local enable_sort = (on|off)$/.test(q.sql)),
      'planner settings only besides the query',
    );
    const { sql, parameters } = selects[0];
    t.false(sql.includes('drop table') || sql.includes(hostile), sql);
    t.false(sql.includes(scope.siteId), 'the site travels as a parameter');
    t.true(parameters.includes(scope.siteId), 'the site predicate is there');
    t.true(parameters.includes('staging'), 'the environment predicate is there');
    t.true(
      parameters.includes(likePattern(hostile)) && parameters.includes(hostile),
      'the values travel as parameters',
    );
  }
});

test('contains escapes %, _ and \\ and matches anywhere', (t) => {
  t.is(likePattern('100%_off\\x'), '%100\\%\\_off\\\\x%');
  t.is(likePattern('/a'), '%/a%');
});
