import test from 'ava';
import fc from 'fast-check';
import { ISSUE_STATUSES } from '../../shared/domain/issue-status.ts';
import { issueSeverity, type IssueStatus } from './clustering.ts';
import { T0 } from './fixtures.test-support.ts';
import { issueText } from './issue-text.ts';
import { DAY_MS, HOUR_MS } from './time.ts';
import { RESOLVE_AFTER_DAYS, planTriage, type TriageIssue } from './triage.ts';

/** An issue whose stored text and severity are what the triage would compute, so only the rule under test fires. */
function issue(over: Partial<TriageIssue> & Pick<TriageIssue, 'id'>): TriageIssue {
  const base = {
    siteId: 'site-1',
    page: '/checkout',
    selector: '#pay',
    signalType: 'rage_click',
    status: 'open' as IssueStatus,
    frozen: false,
    label: 'Pay',
    createdAt: T0 - 3 * DAY_MS,
    lastSignalAt: T0 - HOUR_MS,
    pageSessions: 100,
    windowAffectedSessions: 10,
    ...over,
  };
  const text = issueText(base);
  const severity = issueSeverity({
    signalType: base.signalType,
    pageSessions: base.pageSessions,
    windowAffectedSessions: base.windowAffectedSessions,
    lastSignalAt: base.lastSignalAt,
    now: T0,
  });
  return { title: text.title, hypothesis: text.hypothesis, severity, ...base, ...over };
}

test('an up-to-date, recently active issue needs nothing', (t) => {
  t.deepEqual(planTriage([issue({ id: 'iss_1' })], T0), []);
});

test('selector variants of one element merge into the oldest issue', (t) => {
  const actions = planTriage(
    [
      issue({ id: 'iss_b', selector: 'ul > li:nth-child(2) > button', createdAt: T0 - 2 * DAY_MS }),
      issue({ id: 'iss_a', selector: 'ul > li:nth-child(1) > button', createdAt: T0 - 5 * DAY_MS }),
      issue({ id: 'iss_c', selector: 'ul>li:nth-child(9)>button.css-1ab2c3', createdAt: T0 - 1 * DAY_MS }),
      issue({ id: 'iss_other_type', selector: 'ul > li:nth-child(3) > button', signalType: 'dead_click' }),
      issue({ id: 'iss_other_page', selector: 'ul > li:nth-child(3) > button', page: '/cart' }),
    ],
    T0,
  );
  t.deepEqual(
    actions.map((a) => [a.kind, a.issueId, a.changes]),
    [
      ['merge', 'iss_b', { status: 'resolved', mergedInto: 'iss_a' }],
      ['merge', 'iss_c', { status: 'resolved', mergedInto: 'iss_a' }],
    ],
  );
});

test('closed and ignored issues are not merged', (t) => {
  const actions = planTriage(
    [
      issue({ id: 'iss_a', selector: 'li:nth-child(1)' }),
      issue({ id: 'iss_b', selector: 'li:nth-child(2)', status: 'ignored' }),
      issue({ id: 'iss_c', selector: 'li:nth-child(3)', status: 'resolved' }),
    ],
    T0,
  );
  t.deepEqual(actions, []);
});

test(`an issue with no signal for ${RESOLVE_AFTER_DAYS} days is resolved, not before`, (t) => {
  const quiet = issue({
    id: 'iss_q',
    selector: '#q',
    lastSignalAt: T0 - RESOLVE_AFTER_DAYS * DAY_MS,
    windowAffectedSessions: 0,
  });
  const almost = issue({
    id: 'iss_r',
    selector: '#r',
    lastSignalAt: T0 - RESOLVE_AFTER_DAYS * DAY_MS + 1,
    windowAffectedSessions: 0,
  });
  const actions = planTriage([quiet, almost], T0);
  t.deepEqual(
    actions.map((a) => [a.kind, a.issueId]),
    [['resolve', 'iss_q']],
  );
  t.is(actions[0]?.changes.status, 'resolved');
  t.regex(actions[0]?.reason ?? '', /no signal for 7 days/);
});

test('an issue that never had a signal is judged from its creation; in_progress is left to its owner', (t) => {
  const actions = planTriage(
    [
      issue({
        id: 'iss_never',
        selector: '#n',
        lastSignalAt: null,
        createdAt: T0 - 8 * DAY_MS,
        windowAffectedSessions: 0,
      }),
      issue({
        id: 'iss_owned',
        selector: '#o',
        status: 'in_progress',
        lastSignalAt: T0 - 20 * DAY_MS,
        windowAffectedSessions: 0,
      }),
      issue({
        id: 'iss_regressed',
        selector: '#g',
        status: 'regressed',
        lastSignalAt: T0 - 20 * DAY_MS,
        windowAffectedSessions: 0,
      }),
    ],
    T0,
  );
  t.deepEqual(
    actions.map((a) => [a.kind, a.issueId]),
    [
      ['resolve', 'iss_never'],
      ['resolve', 'iss_regressed'],
    ],
  );
});

test('a merged group is quiet only if every member is', (t) => {
  const actions = planTriage(
    [
      // Its context comes from the cluster, which spans every variant: it sees the recent sessions too.
      issue({
        id: 'iss_old',
        selector: 'li:nth-child(1)',
        createdAt: T0 - 30 * DAY_MS,
        lastSignalAt: T0 - 20 * DAY_MS,
        windowAffectedSessions: 10,
      }),
      issue({ id: 'iss_new', selector: 'li:nth-child(2)', createdAt: T0 - DAY_MS, lastSignalAt: T0 - HOUR_MS }),
    ],
    T0,
  );
  t.deepEqual(
    actions.map((a) => [a.kind, a.issueId]),
    [
      ['merge', 'iss_new'],
      ['refresh', 'iss_old'],
    ],
  );
  t.like(actions[0], { changes: { mergedInto: 'iss_old' } });
  t.is(actions[1]?.changes.status, undefined, 'not resolved although its own last signal is 20 days old');
  const groupSeverity = issueSeverity({
    signalType: 'rage_click',
    pageSessions: 100,
    windowAffectedSessions: 10,
    lastSignalAt: T0 - HOUR_MS,
    now: T0,
  });
  t.true(groupSeverity > 20);
  t.is(actions[1]?.changes.severity, groupSeverity, "its severity takes recency from the group's latest signal");
});

test('titles and severities are refreshed', (t) => {
  const stale = issue({ id: 'iss_1', selector: '#s', title: 'Visitors rage-click something', label: 'Pay now' });
  const decayed = issue({ id: 'iss_2', selector: '#d', severity: 80 });
  const actions = planTriage([stale, decayed], T0);
  t.deepEqual(
    actions.map((a) => [a.kind, a.issueId, a.changes]),
    [
      ['refresh', 'iss_1', { title: "Visitors rage-click 'Pay now' on /checkout" }],
      ['refresh', 'iss_2', { severity: issue({ id: 'x' }).severity }],
    ],
  );
});

test('severity decays overnight for an issue that went quiet', (t) => {
  const i = issue({ id: 'iss_1', lastSignalAt: T0 - 36 * HOUR_MS, windowAffectedSessions: 0, severity: 40 });
  const [a] = planTriage([i], T0);
  t.like(a, { kind: 'refresh', changes: { severity: 0 } });
});

const statusArb = fc.constantFrom<IssueStatus>(...ISSUE_STATUSES);
const triageIssueArb = fc.record({
  selector: fc.constantFrom('#a', 'li:nth-child(1)', 'li:nth-child(2)', 'button.css-1ab2c3', 'button.css-9zz8y7', ''),
  signalType: fc.constantFrom('rage_click', 'dead_click'),
  page: fc.constantFrom('/p', '/q'),
  status: statusArb,
  frozen: fc.boolean(),
  title: fc.constantFrom('old title', 'x'),
  label: fc.option(fc.constantFrom('Pay', 'Buy'), { nil: null }),
  severity: fc.integer({ min: 0, max: 100 }),
  createdAt: fc.integer({ min: T0 - 60 * DAY_MS, max: T0 }),
  lastSignalAt: fc.option(fc.integer({ min: T0 - 60 * DAY_MS, max: T0 }), { nil: null }),
  pageSessions: fc.integer({ min: 0, max: 500 }),
  windowAffectedSessions: fc.integer({ min: 0, max: 50 }),
});

test('property: frozen issues are never touched, one action per issue, and the plan is deterministic', (t) => {
  fc.assert(
    fc.property(fc.array(triageIssueArb, { maxLength: 30 }), (raw) => {
      const issues: TriageIssue[] = raw.map((r, i) => ({ ...r, id: `iss_${i}`, siteId: 's', hypothesis: 'h' }));
      const plan = planTriage(issues, T0);
      const frozen = new Set(issues.filter((i) => i.frozen).map((i) => i.id));
      const targeted = plan.map((a) => a.issueId);
      const survivors = plan.flatMap((a) => (a.changes.mergedInto === undefined ? [] : [a.changes.mergedInto]));
      return (
        targeted.every((id) => !frozen.has(id)) &&
        survivors.every((id) => !frozen.has(id)) &&
        new Set(targeted).size === targeted.length &&
        JSON.stringify(planTriage([...issues].reverse(), T0)) === JSON.stringify(plan)
      );
    }),
    { numRuns: 300 },
  );
  t.pass();
});
