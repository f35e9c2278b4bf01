import test from 'ava';
import { MAX_SIGNAL_WEIGHT, SIGNAL_CATALOG, signalDefinition, signalWeight } from './signal-catalog.ts';

test('every catalog entry is there once', (t) => {
  const types = SIGNAL_CATALOG.map((d) => d.type);
  t.is(new Set(types).size, types.length);
});

test('weights are integers on the 0..10 scale, rage_click being the reference at the top', (t) => {
  for (const d of SIGNAL_CATALOG) {
    t.true(Number.isInteger(d.weight), d.type);
    t.true(d.weight > 0 && d.weight <= MAX_SIGNAL_WEIGHT, d.type);
  }
  t.is(signalWeight('rage_click'), MAX_SIGNAL_WEIGHT);
  t.is(Math.max(...SIGNAL_CATALOG.map((d) => d.weight)), signalWeight('rage_click'));
});

test('weights follow the documented order of how clearly each signal means friction', (t) => {
  const w = signalWeight;
  t.true(w('rage_click') > w('error_encounter'));
  t.true(w('error_encounter') > w('disabled_element_attempt'));
  t.true(w('disabled_element_attempt') > w('dead_click'));
  t.true(w('form_abandon') > w('dead_click'));
  t.true(w('dead_click') > w('navigation_loop'));
  t.true(w('navigation_loop') > w('form_restart'));
});

test('every entry has a concrete recommendation and a detection rule', (t) => {
  for (const d of SIGNAL_CATALOG) {
    t.true(d.recommendation.length > 40, d.type);
    t.true(d.detection.length > 20, d.type);
    t.is(typeof d.journey_edge_decorator, 'boolean');
  }
});

test('unknown types weigh nothing and have no definition', (t) => {
  t.is(signalWeight('hover_hesitation'), 0);
  t.is(signalWeight('constructor'), 0, 'prototype names are not catalog entries');
  t.is(signalDefinition('hover_hesitation'), undefined);
  t.is(signalDefinition('rage_click')?.weight, 10);
});

test('the catalog cannot be changed at run time', (t) => {
  t.throws(() => (SIGNAL_CATALOG as unknown as unknown[]).push({}));
  t.throws(() => {
    (SIGNAL_CATALOG[0] as { weight: number }).weight = 0;
  });
  t.is(signalWeight('rage_click'), 10);
});
