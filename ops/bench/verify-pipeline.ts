/**
 * `npm run bench -- verify --pipeline`: the verify bench's traffic (verify-sim.ts) through the real path — SDK
 * batches to POST /v1/ingest, NATS, the processor with its engine and deploy cycle, PostgreSQL — with the
 * processor's clock under the bench's control (startTestStack's `now`, as the tests move it).
 *
 * Per traffic level: one site, one page, `perKind` issues of each kind (each its own element, so one deploy tests
 * them all at once: they share the page's page-sessions, each draws its own affected sessions). Time is laid 8 days
 * into the past (ingest takes events up to 30 days old): 7 days of before traffic, the regression kinds' issues
 * resolved 72 h before the deploy, the deploy recorded through POST /v1/deploys and moved to its place on the
 * timeline, then the after traffic in the slices up to each look, the processor's clock moved to the look and its
 * tick run. Results are read back from GET /v1/query/deploys/{id} and each issue's verification records, and
 * compared with the pure functions on the very counts the bench sent.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { startTestStack, type TestStack, type TestTenant } from '../testing/stack.ts';
import { getJson, postJson } from '../../shared/testing/http-client.ts';
import { ADMIN_URL, admin, withDb } from './harness.ts';
import { Progress } from './progress.ts';
import {
  BEFORE_HOURS,
  HOUR_MS,
  KINDS,
  LOOK_TICKS,
  QUIET_HOURS,
  afterSlices,
  decisiveResult,
  rng,
  runDeploy,
  simulatePage,
  type Kind,
  type LookOutcome,
  quantileMs,
  showTime,
} from './verify-sim.ts';
import { recordDeployAt } from '../testing/session-traffic.ts';

const DAY_MS = 24 * HOUR_MS;
const PAGE = '/checkout';
/** Concurrent ingest requests: enough to keep ingest and the processor busy without flooding a 2-core machine. */
const SEND_CONCURRENCY = 24;

interface Session {
  at: number;
  version: string;
  selectors: string[];
}

/** `k` distinct indices out of `n` (partial Fisher-Yates). */
function pick(r: () => number, n: number, k: number): number[] {
  const idx = Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(r() * (n - i));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  return idx.slice(0, k);
}

/** `n` sessions spread over [from, to), each signalling on the selectors of the issues that picked it (affected counts as simulated). */
function materialize(
  r: () => number,
  n: number,
  from: number,
  to: number,
  version: string,
  affected: readonly { selector: string; count: number }[],
): Session[] {
  // Every event of a session stays inside its slice (signals follow the page view by up to a few seconds).
  const span = Math.max(0, to - from - 10_000);
  const sessions: Session[] = Array.from({ length: n }, (_, i) => ({
    at: from + Math.floor((span * i) / Math.max(1, n - 1)),
    version,
    selectors: [],
  }));
  for (const a of affected) for (const s of pick(r, n, a.count)) sessions[s].selectors.push(a.selector);
  return sessions;
}

async function send(stack: TestStack, key: string, sessions: readonly Session[]): Promise<number> {
  let events = 0;
  let next = 0;
  const worker = async () => {
    while (next < sessions.length) {
      const s = sessions[next++];
      const evs: Record<string, unknown>[] = [
        { id: randomUUID(), type: 'page_view', ts: new Date(s.at).toISOString(), page: PAGE },
      ];
      s.selectors.forEach((selector, j) =>
        evs.push({
          id: randomUUID(),
          type: 'signal',
          ts: new Date(s.at + 1000 + j).toISOString(),
          page: PAGE,
          signal: 'rage_click',
          selector,
          label: selector.slice(1),
          x: 500,
          y: 500,
        }),
      );
      const body = {
        session_id: `s-${randomUUID()}`,
        sent_at: new Date().toISOString(),
        context: { device: 'desktop', viewport: { w: 1280, h: 800 }, app_version: s.version },
        events: evs,
      };
      const res = await postJson(`${stack.baseUrl}/v1/ingest`, body, { authorization: `Bearer ${key}` });
      if (res.status !== 202) throw new Error(`ingest ${res.status}: ${JSON.stringify(res.body)}`);
      events += evs.length;
    }
  };
  await Promise.all(Array.from({ length: SEND_CONCURRENCY }, worker));
  return events;
}

async function waitStored(stack: TestStack, siteId: string, expected: number): Promise<void> {
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from events where site_id = ${siteId}`.execute(
      stack.infra.database.db,
    );
    if (rows[0].n >= expected) return;
    if (Date.now() > deadline) throw new Error(`only ${rows[0].n} of ${expected} events stored after 10 minutes`);
    await new Promise((res) => setTimeout(res, 250));
  }
}

interface Record_ {
  look: string;
  result: string;
  sessions_before: number;
  sessions_after: number;
  affected_sessions_before: number;
  affected_sessions_after: number;
}

/** The time (ms after the deploy) of the decisive record among a sequence of look records, or null. */
function decidedAt(kind: Kind, looks: readonly { look: string; result: string }[]): number | null {
  const rec = looks.find((x) => x.result === decisiveResult(kind));
  return rec ? LOOK_TICKS.find((l) => l.name === rec.look)!.tickMs : null;
}

interface LevelResult {
  level: number;
  issues: {
    kind: Kind;
    pure: LookOutcome[] | null;
    pureAt: number | null;
    pipeline: Record_[] | null;
    status: string | null;
  }[];
  verdict: string;
  reasons: string[];
  sessions: number;
  seconds: number;
}

async function runLevel(
  stack: TestStack,
  clock: { now: number },
  level: number,
  perKind: number,
  seed: number,
  step: () => void,
): Promise<LevelResult> {
  const started = Date.now();
  const tenant: TestTenant = await stack.newTenant();
  const db = stack.infra.database.db;
  const r = rng(seed + level);
  const kinds = KINDS.flatMap((kind) => Array.from({ length: perKind }, () => kind));
  const selectorOf = (i: number) => `#${kinds[i].id}-${i}`;
  const page = simulatePage(r, kinds, level, Math.floor(r() * 168));
  // The deploy 8 days ago, on the hour: its 7-day after window ends a day before now, its before window 15 days ago.
  const deployAt = Math.floor((Date.now() - 8 * DAY_MS) / HOUR_MS) * HOUR_MS;
  // The processor's clock: at the deploy while the before traffic goes in, then at each look in turn.
  clock.now = deployAt;
  let sent = 0;
  let total = 0;

  // Before: 7 days, hour by hour.
  const before: Session[] = [];
  page.beforeSessions.forEach((n, h) => {
    const from = deployAt - (BEFORE_HOURS - h) * HOUR_MS;
    before.push(
      ...materialize(
        r,
        n,
        from,
        from + HOUR_MS,
        'v1',
        page.issues.map((x, i) => ({ selector: selectorOf(i), count: x.before[h].affected })),
      ),
    );
  });
  total += before.length;
  sent += await send(stack, tenant.publishableKey, before);
  await waitStored(stack, tenant.siteId, sent);
  step();

  // The issues the engine opened, by element; the regression kinds' are resolved 72 h before the deploy.
  const bySelector = new Map<string, string>();
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  for (let offset = 0; ; offset += 100) {
    const res = await getJson(
      `${stack.baseUrl}/v1/query/issues?site_id=${tenant.siteId}&limit=100&offset=${offset}`,
      auth,
    );
    for (const i of res.body.data.issues) bySelector.set(i.selector, i.id);
    if (offset + 100 >= res.body.data.total) break;
  }
  for (const [i, kind] of kinds.entries()) {
    const id = bySelector.get(selectorOf(i));
    if (kind.test !== 'regression' || !id) continue;
    const res = await postJson(
      `${stack.baseUrl}/v1/issues/${id}`,
      { status: 'resolved' },
      { authorization: `Bearer ${tenant.owner.token}` },
    );
    if (res.status !== 200) throw new Error(`resolving ${selectorOf(i)}: ${res.status}`);
    await db
      .updateTable('ux_issues')
      .set({ resolved_at: new Date(deployAt - QUIET_HOURS * HOUR_MS) })
      .where('id', '=', id)
      .execute();
  }

  // The deploy, through the API as CI records it, then moved to its place on the timeline.
  const deployId = await recordDeployAt(
    stack.baseUrl,
    db,
    tenant.secretKey,
    { version: 'v2', description: `verify bench, ${level} ps/h` },
    deployAt,
  );

  // After (sessions on the new version): the slices up to each look's tick, then the clock moves there and the processor ticks.
  const slices = afterSlices();
  let k = 0;
  for (const look of LOOK_TICKS) {
    const batch: Session[] = [];
    for (; k < slices.length && slices[k].toMs <= look.tickMs; k++) {
      batch.push(
        ...materialize(
          r,
          page.afterSessions[k],
          deployAt + slices[k].fromMs,
          deployAt + slices[k].toMs,
          'v2',
          page.issues.map((x, i) => ({ selector: selectorOf(i), count: x.after[k].affected })),
        ),
      );
    }
    total += batch.length;
    sent += await send(stack, tenant.publishableKey, batch);
    await waitStored(stack, tenant.siteId, sent);
    clock.now = deployAt + look.tickMs;
    await stack.tick();
    step();
  }

  const deploy = (await getJson(`${stack.baseUrl}/v1/query/deploys/${deployId}?site_id=${tenant.siteId}`, auth)).body
    .data;
  // The pure functions on the very counts sent, over the issues the engine opened (the processor's families).
  const opened = page.issues.map((x, i) => ({ x, i })).filter(({ i }) => bySelector.has(selectorOf(i)));
  const pure = runDeploy(opened.map(({ x }) => x));
  const out: LevelResult['issues'] = [];
  for (const [i, x] of page.issues.entries()) {
    const id = bySelector.get(selectorOf(i));
    const mine = pure[opened.findIndex((o) => o.i === i)];
    let pipeline: Record_[] | null = null;
    let status: string | null = null;
    if (id) {
      const detail = (await getJson(`${stack.baseUrl}/v1/query/issues/${id}?site_id=${tenant.siteId}`, auth)).body.data;
      status = detail.status;
      pipeline = (detail.verifications as (Record_ & { deploy_id: string })[]).filter((v) => v.deploy_id === deployId);
    }
    out.push({ kind: x.kind, pure: mine?.looks ?? null, pureAt: mine?.decidedAtMs ?? null, pipeline, status });
  }
  return {
    level,
    issues: out,
    verdict: deploy.verdict,
    reasons: deploy.verdict_reasons,
    sessions: total,
    seconds: (Date.now() - started) / 1000,
  };
}

const pct = (n: number, of: number) => (of === 0 ? '   -  ' : `${((100 * n) / of).toFixed(0)}%`.padStart(5));

export async function runPipelineBench(o: { perKind: number; levels: number[]; seed: number }): Promise<void> {
  if (o.levels.some((l) => !Number.isFinite(l) || l <= 0) || !(o.perKind > 0))
    throw new Error('--levels takes positive page-sessions per hour, --per-kind a positive count');
  const dbName = `friction_bench_verify_${randomUUID().slice(0, 8)}`;
  await admin(`create database ${dbName}`);
  let stack: TestStack | undefined;
  const progress = new Progress('verify --pipeline', o.levels.length * (LOOK_TICKS.length + 1));
  let steps = 0;
  const results: LevelResult[] = [];
  const clock = { now: Date.now() };
  try {
    stack = await startTestStack({
      databaseUrl: withDb(ADMIN_URL, dbName),
      now: () => clock.now,
      env: { INGEST_RATE_LIMIT_PER_MIN: '100000000' },
    });
    for (const level of o.levels)
      results.push(await runLevel(stack, clock, level, o.perKind, o.seed, () => progress.update(++steps)));
  } finally {
    progress.done();
    await stack?.stop().catch(() => {});
    await admin(`drop database if exists ${dbName} with (force)`).catch(() => {});
  }
  const lines = [
    `deploy verification through the real pipeline: ${o.perKind} issues per kind per traffic level, one deploy per level (seed ${o.seed})`,
    'per kind and level: issues decided (verified / regressed) by 24 h and by 7 d and the median time to it, pipeline vs the pure functions on the',
    'same sent counts (Holm across the same families), and agreement: looks whose result (and counts) the pipeline recorded as the pure functions did.',
    '  kind                                      ps/h │ pipeline 24 h  7 d  median │ pure 24 h  7 d  median │ same result │ same counts │ missing │ status at the end',
  ];
  const median = (xs: (number | null)[]) =>
    showTime(
      quantileMs(
        xs.filter((x): x is number => x !== null),
        xs.length,
        0.5,
      ),
    );
  for (const res of results) {
    for (const kind of KINDS) {
      const mine = res.issues.filter((x) => x.kind === kind);
      let p24 = 0,
        p7 = 0,
        q24 = 0,
        q7 = 0,
        looks = 0,
        sameResult = 0,
        sameCounts = 0,
        missing = 0;
      const pAt: (number | null)[] = [];
      const qAt: (number | null)[] = [];
      const statuses = new Map<string, number>();
      for (const x of mine) {
        if (x.pipeline === null || x.pure === null) {
          missing++;
          continue;
        }
        statuses.set(x.status ?? '?', (statuses.get(x.status ?? '?') ?? 0) + 1);
        const at = decidedAt(kind, x.pipeline);
        pAt.push(at);
        qAt.push(x.pureAt);
        if (at !== null && at <= DAY_MS) p24++;
        if (at !== null) p7++;
        if (x.pureAt !== null && x.pureAt <= DAY_MS) q24++;
        if (x.pureAt !== null) q7++;
        for (const pl of x.pure) {
          looks++;
          const got = x.pipeline.find((v) => v.look === pl.look);
          if (!got) continue;
          if (got.result === pl.result) sameResult++;
          if (
            got.sessions_before === pl.counts.sessionsBefore &&
            got.sessions_after === pl.counts.sessionsAfter &&
            got.affected_sessions_before === pl.counts.affectedBefore &&
            got.affected_sessions_after === pl.counts.affectedAfter
          )
            sameCounts++;
        }
      }
      const n = mine.length - missing;
      const st = [...statuses.entries()].map(([k, v]) => `${k} ${v}`).join(', ');
      lines.push(
        `  ${kind.name.padEnd(40)} ${String(res.level).padStart(5)} │      ${pct(p24, n)} ${pct(p7, n)} ${median(pAt).padStart(7)} │  ${pct(q24, n)} ${pct(q7, n)} ${median(qAt).padStart(7)} │ ${`${sameResult}/${looks}`.padStart(11)} │ ${`${sameCounts}/${looks}`.padStart(11)} │ ${String(missing).padStart(7)} │ ${st}`,
      );
    }
    lines.push(
      `  ${res.level} ps/h: ${res.sessions} sessions sent in ${res.seconds.toFixed(0)} s; the deploy's verdict ${res.verdict} (${res.reasons.length} reason(s)${res.reasons.length ? `, first: ${res.reasons[0]}` : ''})`,
    );
  }
  lines.push(
    'missing: elements the engine opened no issue for (too few signals before the deploy), left out of the pipeline and pure shares alike.',
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}
