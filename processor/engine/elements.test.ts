import test from 'ava';
import { signalDefinition } from '../../shared/domain/signal-catalog.ts';
import { applySignals, createClusterState } from './cluster-state.ts';
import { ELEMENT_SCALE, elementFrictionScore, elementsFromState } from './elements.ts';
import { T0, sig } from './fixtures.test-support.ts';
import { DAY_MS } from './time.ts';

test('an element aggregates every signal type on it, with distinct affected users', (t) => {
  const s = createClusterState();
  applySignals(s, [
    sig('a', '/checkout', 'rage_click', T0 - 40, { selector: 'button.css-1ab2c3', label: 'Pay' }),
    sig('a', '/checkout', 'dead_click', T0 - 30, { selector: 'button.css-1ab2c3' }),
    sig('b', '/checkout', 'dead_click', T0 - 20, { selector: 'button.css-9zz8y7', label: 'Pay now' }),
    sig('c', '/checkout', 'mystery', T0 - 10, { selector: 'button' }),
  ]);
  const [el, ...rest] = elementsFromState(s, 'site-1', T0);
  t.is(rest.length, 0, 'one element: the selectors are variants');
  t.like(el, {
    page: '/checkout',
    canonicalSelector: 'button',
    selector: 'button',
    label: 'Pay now',
    signals: { dead_click: 2, mystery: 1, rage_click: 1 },
    signalCount: 4,
    affectedUsers: 3,
    dominantSignal: 'rage_click',
    lastSignalAt: T0 - 10,
  });
  t.is(el?.recommendation, signalDefinition('rage_click')?.recommendation ?? null);
  // rage: 1 session × 10, dead: 2 sessions × 5, mystery: 0.
  t.is(el?.frictionScore, elementFrictionScore({ rage_click: 1, dead_click: 2 }));
  t.is(el?.frictionScore, Math.round(1000 * (1 - Math.exp(-20 / ELEMENT_SCALE))) / 10);
});

test('breadth beats one visitor hammering: friction counts sessions, not clicks', (t) => {
  const s = createClusterState();
  applySignals(s, [
    ...Array.from({ length: 100 }, (_, i) => sig('angry', '/p', 'rage_click', T0 - i, { selector: '#one' })),
    ...Array.from({ length: 10 }, (_, i) => sig(`v${i}`, '/p', 'rage_click', T0 - i, { selector: '#many' })),
  ]);
  const ranked = elementsFromState(s, 'site-1', T0);
  t.deepEqual(
    ranked.map((e) => e.selector),
    ['#many', '#one'],
  );
  t.is(ranked[1]?.signalCount, 100);
});

test('page-level signals are not elements; unknown-only elements have no dominant signal', (t) => {
  const s = createClusterState();
  applySignals(s, [sig('a', '/p', 'navigation_loop', T0), sig('a', '/p', 'mystery', T0, { selector: '#m' })]);
  const els = elementsFromState(s, 'site-1', T0);
  t.deepEqual(
    els.map((e) => e.selector),
    ['#m'],
  );
  t.is(els[0]?.dominantSignal, null);
  t.is(els[0]?.recommendation, null);
  t.is(els[0]?.frictionScore, 0);
});

test('elements can be listed for one page, and leave with the 7-day window', (t) => {
  const s = createClusterState();
  applySignals(s, [
    sig('a', '/p', 'dead_click', T0, { selector: '#x' }),
    sig('a', '/q', 'dead_click', T0, { selector: '#y' }),
  ]);
  t.deepEqual(
    elementsFromState(s, 'site-1', T0, '/q').map((e) => e.selector),
    ['#y'],
  );
  t.is(elementsFromState(s, 'site-1', T0).length, 2);
  t.is(elementsFromState(s, 'site-1', T0 + 8 * DAY_MS).length, 0);
  t.is(elementsFromState(s, 'other-site', T0).length, 0);
});
