import test from 'ava';
import { conversionMatcher, revenueAtRisk } from './conversion.ts';

test('revenue at risk: the conversion gap times affected sessions times the average value', (t) => {
  // Calm 50 %, affected 10 %: 0.4 × 20 sessions × 25 = 200.
  t.is(revenueAtRisk({ affected: 20, affected_converted: 2, calm: 40, calm_converted: 20 }, 25), 200);
  t.is(
    revenueAtRisk({ affected: 20, affected_converted: 15, calm: 40, calm_converted: 20 }, 25),
    0,
    'affected converting better puts nothing at risk',
  );
  t.is(revenueAtRisk({ affected: 0, affected_converted: 0, calm: 40, calm_converted: 20 }, 25), null);
  t.is(revenueAtRisk({ affected: 3, affected_converted: 0, calm: 0, calm_converted: 0 }, 25), null);
  t.is(revenueAtRisk({ affected: 3, affected_converted: 0, calm: 3, calm_converted: 1 }, null), null);
  t.is(revenueAtRisk({ affected: 3, affected_converted: 0, calm: 3, calm_converted: 1 }, 10), 10);
});

test('conversion event: conversion events, or custom events of another name', (t) => {
  t.deepEqual(conversionMatcher('conversion'), { type: 'conversion', name: null });
  t.deepEqual(conversionMatcher('purchase'), { type: 'custom', name: 'purchase' });
});
