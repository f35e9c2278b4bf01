import test from 'ava';
import { randomUUID } from 'node:crypto';
import { CONTEXT_BUDGET_BYTES, CONTEXT_CAPS, CONTEXT_TEXT_MAX, SiteContextSchema } from './context.schema.ts';
import { clip, fitToBudget, presentContext, type ContextParts } from './context.presenter.ts';

const long = (n: number, c = 'x') => c.repeat(n);

function parts(n: number, text: (i: number) => string): ContextParts {
  const range = Array.from({ length: n }, (_, i) => i);
  return {
    siteId: randomUUID(),
    environment: 'production',
    at: new Date('2026-11-26T12:00:00Z'),
    overall: { score: 31.2, trend: 'up' },
    pages: range.map((i) => ({
      page: `/p${i}${text(i)}`,
      score: 90 - i,
      trend: 'up' as const,
      dominant_signal: 'rage_click',
    })),
    issues: {
      rows: range.map((i) => ({
        id: randomUUID(),
        title: `issue ${i} ${text(i)}`,
        page: `/p${i}`,
        signal_type: 'dead_click',
        severity: 80 - i,
        status: 'open',
        affected_sessions: 10,
      })),
      total: n + 7,
    },
    deploys: {
      rows: range.map((i) => ({
        id: randomUUID(),
        version: `1.${i}`,
        recorded_at: '2026-11-26T10:00:00.000Z',
        confusion_before: 20,
        confusion_after: 22,
        delta: 2,
        verdict: 'PASS' as const,
        verdict_reasons: ['a', 'b', 'c', 'd', text(i)],
      })),
      total: n,
    },
    alerts: {
      rows: range.map((i) => ({
        id: randomUUID(),
        rule_name: `rule ${text(i)}`,
        page: '/p',
        trigger_type: 'spike',
        score_before: 10.04,
        score_after: 40.06,
        status: 'fired',
        triggered_at: new Date('2026-11-26T11:00:00Z'),
        channels: i % 2 ? ['mcp'] : null,
      })),
      total: n,
    },
    recommendations: {
      rows: range.map((i) => ({
        rank: i + 1,
        recommendation: `fix ${text(i)}`,
        page: `/p${i}`,
        closes: { issue_id: randomUUID() },
        impact: { severity: 50, affected_sessions: 3 },
      })),
      total: n,
    },
  };
}

test('each list keeps at most its cap, worst first, with the total before the cap and truncated set only when something was left out', (t) => {
  const ctx = presentContext(
    parts(30, () => ''),
    CONTEXT_CAPS,
  );
  t.true(SiteContextSchema.safeParse(ctx).success);
  for (const k of ['pages', 'issues', 'deploys', 'alerts', 'recommendations'] as const) {
    t.is(ctx[k].items.length, CONTEXT_CAPS[k], k);
    t.true(ctx[k].truncated, k);
  }
  t.is(ctx.pages.total, 30);
  t.is(ctx.issues.total, 37, 'the total is the count of all matching rows, not of the rows read');
  t.is(ctx.pages.items[0].page, '/p0');
  t.is(ctx.deploys.items[0].verdict_reasons.length, 3);
  t.deepEqual(
    ctx.alerts.items.map((a) => a.mcp_channel),
    [false, true, false, true, false],
  );
  t.is(ctx.alerts.items[0].score_before, 10);
  const small = presentContext(
    parts(2, () => ''),
    CONTEXT_CAPS,
  );
  t.false(small.pages.truncated);
  t.is(small.pages.items.length, 2);
  t.true(small.issues.truncated, 'issues total 9 > 2 rows read');
});

test('free text is clipped, and the whole context stays within the size budget however long the strings', (t) => {
  t.is(clip(long(500)).length, CONTEXT_TEXT_MAX);
  t.true(clip(long(500)).endsWith('…'));
  t.is(clip('short'), 'short');
  const ctx = presentContext(
    parts(30, (i) => long(400, String.fromCharCode(97 + (i % 26)))),
    CONTEXT_CAPS,
  );
  const size = Buffer.byteLength(JSON.stringify(ctx));
  t.true(size <= CONTEXT_BUDGET_BYTES, `${size} bytes`);
  t.true(
    ctx.issues.items.length > 0 && ctx.pages.items.length > 0,
    'cuts spread over the lists instead of emptying one',
  );
  const counts = ['pages', 'issues', 'deploys', 'alerts', 'recommendations'].map((k) => ctx[k as 'pages'].items.length);
  t.true(Math.max(...counts) - Math.min(...counts) <= 5, `items per list ${counts}`);
});

test('fitToBudget leaves a context within the budget untouched and does not change its input', (t) => {
  const ctx = presentContext(
    parts(3, () => ''),
    CONTEXT_CAPS,
  );
  const copy = structuredClone(ctx);
  t.deepEqual(fitToBudget(ctx), ctx);
  const cut = fitToBudget(ctx, 600);
  t.true(Buffer.byteLength(JSON.stringify(cut)) <= 600);
  t.deepEqual(ctx, copy);
});
