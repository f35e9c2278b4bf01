import test from 'ava';
import fc from 'fast-check';
import {
  ClusterReader,
  MIN_ISSUE_SESSIONS,
  commitClusterUpdate,
  MIN_ISSUE_SIGNALS,
  applySignals,
  createClusterState,
  decideIssue,
  draftIssue,
  evictClusters,
  foldSignals,
  getCluster,
  issueSeverity,
  opensIssue,
  rankIssues,
  sessionsActiveSince,
  severityFactors,
  summarizeCluster,
  type ClusterKey,
  type ClusterSummary,
  type IssueRecord,
} from './clustering.ts';
import { SIGNAL_CATALOG } from '../../shared/domain/signal-catalog.ts';
import type { EngineEvent } from './events.ts';
import { T0, sig, view } from './fixtures.test-support.ts';
import { DAY_MS, HOUR_MS } from './time.ts';

const key = (signalType: string, selector = '#pay', page = '/checkout'): ClusterKey => ({
  siteId: 'site-1',
  page,
  selector,
  signalType,
});

function summary(events: EngineEvent[], k: ClusterKey, now = T0): ClusterSummary | null {
  const s = createClusterState();
  applySignals(s, events);
  return summarizeCluster(getCluster(s, k), now);
}

test('signals cluster by page, canonical selector and type', (t) => {
  const s = createClusterState();
  applySignals(s, [
    sig('a', '/checkout', 'rage_click', T0 - 50, { selector: 'ul > li:nth-child(1) > button' }),
    sig('b', '/checkout', 'rage_click', T0 - 40, { selector: 'ul>li:nth-child(2)>button' }),
    sig('b', '/checkout', 'dead_click', T0 - 30, { selector: 'ul > li:nth-child(2) > button' }),
    sig('c', '/cart', 'rage_click', T0 - 20, { selector: 'ul > li:nth-child(3) > button' }),
    view('d', '/checkout', T0 - 10),
  ]);
  const sel = 'ul > li:nth-child(n) > button';
  t.is(summarizeCluster(getCluster(s, key('rage_click', sel)), T0)?.signalCount, 2, 'row variants are one element');
  t.is(summarizeCluster(getCluster(s, key('dead_click', sel)), T0)?.signalCount, 1, 'another type is another cluster');
  t.is(
    summarizeCluster(getCluster(s, key('rage_click', sel, '/cart')), T0)?.signalCount,
    1,
    'another page is another cluster',
  );
});

test('a summary has counts, distinct sessions, first/last times, latest label and raw selector, ranked evidence', (t) => {
  const events = [
    sig('a', '/checkout', 'rage_click', T0 - 5 * HOUR_MS, { selector: 'button.css-1ab2c3', label: 'Pay' }),
    sig('a', '/checkout', 'rage_click', T0 - 4 * HOUR_MS, { selector: 'button.css-1ab2c3', label: 'Pay now' }),
    sig('b', '/checkout', 'rage_click', T0 - 3 * HOUR_MS, { selector: 'button.css-9zz8y7' }),
    sig('a', '/checkout', 'rage_click', T0 - 2 * HOUR_MS, { selector: 'button.css-1ab2c3', label: '  ' }),
    sig('c', '/checkout', 'rage_click', T0 - 30 * HOUR_MS, { selector: 'button.css-1ab2c3' }),
  ];
  const s = summary(events, key('rage_click', 'button'));
  t.like(s, {
    selector: 'button.css-1ab2c3',
    label: 'Pay now',
    signalCount: 5,
    affectedSessions: 3,
    windowAffectedSessions: 2,
    firstSignalAt: T0 - 30 * HOUR_MS,
    lastSignalAt: T0 - 2 * HOUR_MS,
  });
  t.deepEqual(s?.evidence, [
    { sessionId: 'a', signals: 3, lastSignalAt: T0 - 2 * HOUR_MS },
    { sessionId: 'b', signals: 1, lastSignalAt: T0 - 3 * HOUR_MS },
    { sessionId: 'c', signals: 1, lastSignalAt: T0 - 30 * HOUR_MS },
  ]);
});

test('ties in time are broken by value, so "latest" never depends on arrival order', (t) => {
  const a = sig('a', '/p', 'rage_click', T0, { id: 'evt-b', label: 'B', selector: '#x' });
  const b = sig('b', '/p', 'rage_click', T0, { id: 'evt-a', label: 'A', selector: '#x' });
  t.is(summary([a, b], key('rage_click', '#x', '/p'))?.label, 'B');
  t.is(summary([b, a], key('rage_click', '#x', '/p'))?.label, 'B');
});

test('evidence keeps the top 10 sessions', (t) => {
  const events = Array.from({ length: 15 }, (_, i) =>
    Array.from({ length: i + 1 }, () => sig(`s${i}`, '/p', 'dead_click', T0 - i, { selector: '#x' })),
  ).flat();
  const s = summary(events, key('dead_click', '#x', '/p'));
  t.is(s?.evidence.length, 10);
  t.is(s?.evidence[0]?.sessionId, 's14');
  t.is(s?.evidence[0]?.signals, 15);
});

test('the cluster window is 7 UTC days; eviction frees old days and reports the clusters', (t) => {
  const s = createClusterState();
  const today = Math.floor(T0 / DAY_MS) * DAY_MS;
  applySignals(s, [
    sig('a', '/p', 'rage_click', today - 6 * DAY_MS, { selector: '#x' }),
    sig('b', '/p', 'rage_click', today - 6 * DAY_MS - 1, { selector: '#x' }),
    sig('c', '/q', 'rage_click', today - 9 * DAY_MS, { selector: '#y' }),
  ]);
  t.is(summarizeCluster(getCluster(s, key('rage_click', '#x', '/p')), T0)?.signalCount, 1);
  t.is(summarizeCluster(getCluster(s, key('rage_click', '#y', '/q')), T0), null);
  const changed = evictClusters(s, T0);
  t.deepEqual(changed.map((k) => k.page).sort(), ['/p', '/q']);
  t.is(getCluster(s, key('rage_click', '#y', '/q')), undefined);
  t.is(getCluster(s, key('rage_click', '#x', '/p'))?.days.length, 1);
});

test('fold is staged: the committed state is untouched until commit, the reader sees the batch', (t) => {
  const s = createClusterState();
  applySignals(s, [sig('a', '/p', 'rage_click', T0, { selector: '#x' })]);
  const update = foldSignals(s, [sig('b', '/p', 'rage_click', T0, { selector: '#x' })]);
  t.is(summarizeCluster(getCluster(s, key('rage_click', '#x', '/p')), T0)?.affectedSessions, 1);
  t.is(update.clusters.length, 1);
  const staged = new ClusterReader(s, update).summary(key('rage_click', '#x', '/p'), T0);
  t.is(staged?.affectedSessions, 2);
  t.is(
    summarizeCluster(getCluster(s, key('rage_click', '#x', '/p')), T0)?.affectedSessions,
    1,
    'the committed state is untouched',
  );
  commitClusterUpdate(s, update);
  t.deepEqual(summarizeCluster(getCluster(s, key('rage_click', '#x', '/p')), T0), staged);
});

test('sessionsActiveSince counts sessions with a signal after a time', (t) => {
  const s = createClusterState();
  applySignals(s, [
    sig('a', '/p', 'rage_click', T0 - 3 * DAY_MS, { selector: '#x' }),
    sig('b', '/p', 'rage_click', T0 - HOUR_MS, { selector: '#x' }),
    sig('a', '/p', 'rage_click', T0 - 10, { selector: '#x' }),
  ]);
  const c = getCluster(s, key('rage_click', '#x', '/p'));
  t.is(sessionsActiveSince(c, T0 - DAY_MS, T0), 2);
  t.is(sessionsActiveSince(c, T0 - 5, T0), 0);
  t.is(sessionsActiveSince(undefined, 0, T0), 0);
});

function fakeSummary(over: Partial<ClusterSummary> = {}): ClusterSummary {
  return {
    key: key('rage_click', 'button#pay-now'),
    selector: 'button#pay-now',
    label: 'Pay now',
    signalCount: 40,
    affectedSessions: 20,
    windowAffectedSessions: 20,
    firstSignalAt: T0 - DAY_MS,
    lastSignalAt: T0 - 60_000,
    evidence: [{ sessionId: 'ses_1', signals: 4, lastSignalAt: T0 - 60_000 }],
    ...over,
  };
}

test(`an issue opens at ${MIN_ISSUE_SIGNALS} signals from ${MIN_ISSUE_SESSIONS} sessions of a catalogued type`, (t) => {
  t.true(opensIssue(fakeSummary({ signalCount: 5, affectedSessions: 3 })));
  t.false(opensIssue(fakeSummary({ signalCount: 4, affectedSessions: 3 })));
  t.false(opensIssue(fakeSummary({ signalCount: 50, affectedSessions: 2 })), 'one or two visitors are not a pattern');
  t.false(
    opensIssue(fakeSummary({ key: key('hover_hesitation'), signalCount: 500, affectedSessions: 100 })),
    'unknown types weigh 0',
  );
});

test('severity is share × weight × traffic × recency', (t) => {
  const input = {
    signalType: 'rage_click',
    pageSessions: 1000,
    windowAffectedSessions: 250,
    lastSignalAt: T0,
    now: T0,
  };
  t.is(issueSeverity(input), 100, 'a quarter of 1000 sessions rage-clicking right now is as bad as it gets');
  t.deepEqual(severityFactors({ ...input, windowAffectedSessions: 50 }), {
    share: 0.2,
    weight: 1,
    traffic: 1,
    recency: 1,
  });
  t.is(issueSeverity({ ...input, windowAffectedSessions: 50 }), 20);
  t.is(issueSeverity({ ...input, signalType: 'dead_click' }), 50);
  t.is(issueSeverity({ ...input, lastSignalAt: T0 - 12 * HOUR_MS }), 50, 'halves every 12 h');
  t.is(issueSeverity({ ...input, pageSessions: 0 }), 0);
  t.is(issueSeverity({ ...input, lastSignalAt: null }), 0);
  t.is(issueSeverity({ ...input, windowAffectedSessions: 0 }), 0, 'no signal in the last 24 h: no current impact');
  t.is(issueSeverity({ ...input, signalType: 'mystery' }), 0);
  const small = issueSeverity({ ...input, pageSessions: 4, windowAffectedSessions: 4 });
  t.true(small > 15 && small < 30, `a 4-session page is not top priority (${small})`);
});

test('property: severity is within 0..100 and grows with share and weight', (t) => {
  const types = SIGNAL_CATALOG.map((d) => d.type);
  fc.assert(
    fc.property(
      fc.constantFrom(...types),
      fc.integer({ min: 0, max: 1_000_000 }),
      fc.integer({ min: 0, max: 1_000_000 }),
      fc.integer({ min: 0, max: 30 * DAY_MS }),
      (type, pageSessions, affected, age) => {
        const base = {
          signalType: type,
          pageSessions,
          windowAffectedSessions: Math.min(affected, pageSessions),
          lastSignalAt: T0 - age,
          now: T0,
        };
        const s = issueSeverity(base);
        const more = issueSeverity({
          ...base,
          windowAffectedSessions: Math.min(pageSessions, base.windowAffectedSessions + 1),
        });
        const rage = issueSeverity({ ...base, signalType: 'rage_click' });
        return s >= 0 && s <= 100 && more >= s && rage >= s;
      },
    ),
  );
  t.pass();
});

const record = (over: Partial<IssueRecord> = {}): IssueRecord => ({
  id: 'iss_1',
  status: 'open',
  frozen: false,
  selector: 'button#pay-now',
  label: 'Pay now',
  signalCount: 40,
  affectedSessions: 20,
  severity: issueSeverity({
    signalType: 'rage_click',
    pageSessions: 100,
    windowAffectedSessions: 20,
    lastSignalAt: T0 - 60_000,
    now: T0,
  }),
  lastSignalAt: T0 - 60_000,
  resolvedAt: null,
  evidence: [{ sessionId: 'ses_1', signals: 4, lastSignalAt: T0 - 60_000 }],
  ...over,
});

/** The decision for `cluster` and its stored issue `existing` on a page of 100 sessions, at T0 unless `now`. */
const decide = (cluster: ClusterSummary | null, existing: IssueRecord | null, now = T0) =>
  decideIssue({ summary: cluster, existing, pageSessions: 100, now });

test('decide: a new cluster past the threshold creates an issue with generated text', (t) => {
  const d = decide(fakeSummary(), null);
  t.is(d.action, 'create');
  if (d.action !== 'create') return;
  t.is(d.issue.title, "Visitors rage-click 'Pay now' on /checkout");
  t.is(
    d.issue.hypothesis,
    'the button likely looks active but does not respond, or responds too slowly for visitors to notice',
  );
  t.is(d.issue.status, 'open');
  t.deepEqual(d.issue, draftIssue(fakeSummary(), 100, T0));
  t.deepEqual(decide(fakeSummary({ affectedSessions: 2 }), null), { action: 'none' });
  t.deepEqual(decide(null, null), { action: 'none' });
});

test('decide: nothing changed → none; small growth → quiet update; a new power of two → notify', (t) => {
  t.deepEqual(decide(fakeSummary(), record()), {
    action: 'none',
  });
  const quiet = decide(fakeSummary({ signalCount: 41 }), record());
  t.deepEqual(quiet, { action: 'update', changes: { signalCount: 41 }, notify: false });
  const louder = decide(fakeSummary({ signalCount: 64 }), record());
  t.like(louder, { action: 'update', changes: { signalCount: 64 }, notify: true });
});

test('decide: a severity entering a higher 10-point band notifies', (t) => {
  const existing = record({ severity: 38 });
  const d = decide(fakeSummary({ windowAffectedSessions: 25 }), existing);
  t.like(d, { action: 'update', notify: true });
  if (d.action === 'update') t.true((d.changes.severity ?? 0) >= 40);
});

test('decide: the live path never rewrites title, hypothesis or status of an active issue', (t) => {
  const d = decide(fakeSummary({ label: 'Pay €12 now', signalCount: 500 }), record());
  t.is(d.action, 'update');
  if (d.action !== 'update') return;
  t.is(d.changes.label, 'Pay €12 now');
  t.false('title' in d.changes);
  t.false('hypothesis' in d.changes);
  t.false('status' in d.changes);
});

test('decide: an emptied cluster zeroes counts and severity but keeps the last signal time', (t) => {
  const d = decide(null, record(), T0 + 8 * DAY_MS);
  t.deepEqual(d, {
    action: 'update',
    changes: { signalCount: 0, affectedSessions: 0, severity: 0, evidence: [] },
    notify: false,
  });
});

test('decide: renewed activity on a resolved or verified issue marks it signalling again, once per closure, and never changes its status', (t) => {
  /** The decision for `existing` at T0 when its cluster holds 64 signals, `since` sessions of them since it closed. */
  const renewed = (existing: IssueRecord, since: number) =>
    decideIssue({
      summary: fakeSummary({ signalCount: 64 }),
      existing,
      pageSessions: 100,
      now: T0,
      sessionsSinceResolved: since,
    });
  for (const status of ['resolved', 'verified'] as const) {
    const closed = record({ status, resolvedAt: T0 - 2 * DAY_MS });
    const d = renewed(closed, 3);
    t.like(d, { action: 'update', changes: { signallingAgainAt: T0 }, notify: false });
    if (d.action === 'update')
      t.false('status' in d.changes, "regressed comes from a deploy look's test, not from 3 sessions");
    const few = renewed(closed, 2);
    if (few.action === 'update') t.false('signallingAgainAt' in few.changes);
    // Already marked in this closure: not marked again; marked in an earlier closure: marked anew.
    const marked = renewed({ ...closed, signallingAgainAt: T0 - DAY_MS }, 30);
    if (marked.action === 'update') t.false('signallingAgainAt' in marked.changes);
    const earlier = renewed({ ...closed, signallingAgainAt: T0 - 3 * DAY_MS }, 30);
    t.like(earlier, { action: 'update', changes: { signallingAgainAt: T0 } });
  }
  const open = renewed(record({ status: 'open', resolvedAt: T0 - 2 * DAY_MS }), 30);
  if (open.action === 'update')
    t.false('signallingAgainAt' in open.changes, 'an open issue is signalling, not signalling again');
});

test('decide: an ignored issue is updated quietly and never reopened', (t) => {
  const d = decideIssue({
    summary: fakeSummary({ signalCount: 4096 }),
    existing: record({ status: 'ignored' }),
    pageSessions: 100,
    now: T0,
    sessionsSinceResolved: 100,
  });
  t.like(d, { action: 'update', notify: false });
  if (d.action === 'update') t.false('status' in d.changes);
});

test('fixing one signal type while another appears closes one issue and opens a separate one', (t) => {
  const s = createClusterState();
  const dead = Array.from({ length: 8 }, (_, i) =>
    sig(`d${i}`, '/checkout', 'dead_click', T0 - 3 * DAY_MS + i, { selector: '#pay', label: 'Pay' }),
  );
  applySignals(s, dead);
  const deadKey = key('dead_click');
  const created = decideIssue({
    summary: summarizeCluster(getCluster(s, deadKey), T0 - 3 * DAY_MS + HOUR_MS),
    existing: null,
    pageSessions: 50,
    now: T0 - 3 * DAY_MS + HOUR_MS,
  });
  t.is(created.action, 'create');
  // The fix ships: dead clicks stop, rage clicks start on the same element.
  const rage = Array.from({ length: 6 }, (_, i) =>
    sig(`r${i}`, '/checkout', 'rage_click', T0 - HOUR_MS + i, { selector: '#pay', label: 'Pay' }),
  );
  const update = applySignals(s, rage);
  t.deepEqual(
    update.clusters.map((c) => c.key.signalType),
    ['rage_click'],
    'the dead_click cluster is not touched',
  );
  const rageDecision = decideIssue({
    summary: summarizeCluster(getCluster(s, key('rage_click')), T0),
    existing: null,
    pageSessions: 50,
    now: T0,
  });
  t.like(rageDecision, {
    action: 'create',
    issue: { signalType: 'rage_click', title: "Visitors rage-click 'Pay' on /checkout" },
  });
  // The old issue's severity falls to 0 once no dead click is in the last 24 h.
  const deadNow = decideIssue({
    summary: summarizeCluster(getCluster(s, deadKey), T0),
    existing: record({
      selector: '#pay',
      label: 'Pay',
      signalCount: 8,
      affectedSessions: 8,
      severity: 30,
      evidence: undefined,
    }),
    pageSessions: 50,
    now: T0,
  });
  t.like(deadNow, { action: 'update', changes: { severity: 0 } });
});

test('issues rank by severity, then affected sessions, then signals', (t) => {
  const base = { page: '/p', selector: '#x', signalType: 'rage_click' };
  const ranked = rankIssues([
    { ...base, id: 'a', severity: 10, affectedSessions: 50, signalCount: 90 },
    { ...base, id: 'b', severity: 60, affectedSessions: 5, signalCount: 9 },
    { ...base, id: 'c', severity: 10, affectedSessions: 50, signalCount: 95 },
    { ...base, id: 'd', severity: 10, affectedSessions: 70, signalCount: 1 },
  ]);
  t.deepEqual(
    ranked.map((i) => i.id),
    ['b', 'd', 'c', 'a'],
  );
});

test('a page keeps its elements in a small form up to 16 and a Map past that; eviction drops emptied ones in both', (t) => {
  const today = Math.floor(T0 / DAY_MS) * DAY_MS;
  for (const n of [3, 16, 17, 40]) {
    const s = createClusterState();
    // Even elements get an old signal only (evicted at T0), odd ones a recent one.
    const events = Array.from({ length: n }, (_, i) =>
      sig(`s${i}`, '/p', 'rage_click', i % 2 === 0 ? today - 9 * DAY_MS : T0 - 10, { selector: `#e${i}` }),
    );
    applySignals(s, events);
    for (let i = 0; i < n; i++)
      t.is(getCluster(s, key('rage_click', `#e${i}`, '/p'))?.days.length, 1, `${n} elements: #e${i} found`);
    t.is(getCluster(s, key('rage_click', '#none', '/p')), undefined);
    t.is(evictClusters(s, T0).length, Math.ceil(n / 2), `${n} elements: the old ones are reported`);
    for (let i = 0; i < n; i++)
      t.is(
        getCluster(s, key('rage_click', `#e${i}`, '/p')) !== undefined,
        i % 2 === 1,
        `${n} elements: #e${i} after eviction`,
      );
    // Adding to an evicted page's form still works.
    applySignals(s, [sig('z', '/p', 'dead_click', T0 - 5, { selector: '#e0' })]);
    t.is(summarizeCluster(getCluster(s, key('dead_click', '#e0', '/p')), T0)?.signalCount, 1);
  }
});

test('a large cluster read after an eviction is the read of the days left, whatever it kept from an earlier read', (t) => {
  const s = createClusterState();
  const k = key('dead_click');
  // 20 sessions three days ago and 20 today: past the derived form, so the cluster has an index and keeps its
  // window's totals, before the eviction and after it.
  const on = (day: number) =>
    Array.from({ length: 20 }, (_, i) =>
      sig(`s${day}-${i}`, '/checkout', 'dead_click', T0 - day * DAY_MS, { selector: '#pay' }),
    );
  applySignals(s, [...on(3), ...on(0)]);
  t.is(
    summarizeCluster(getCluster(s, k), T0)?.signalCount,
    40,
    'read once: the cluster keeps its totals for this window',
  );
  // The window at T0 + 5 days starts after the old signals' day: eviction drops it.
  evictClusters(s, T0 + 5 * DAY_MS);
  t.is(
    summarizeCluster(getCluster(s, k), T0)?.signalCount,
    20,
    'the evicted day is not read back from the kept totals',
  );
});
