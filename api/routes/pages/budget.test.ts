import test from 'ava';
import { pageBudget } from './budget.ts';

test('no matching budget rule: limit null, never exceeded', (t) => {
  t.deepEqual(pageBudget([], '/a', 90), { limit: null, current: 90, exceeded: false });
  t.deepEqual(pageBudget([{ threshold: 10, page_pattern: '/b' }], '/a', 90), {
    limit: null,
    current: 90,
    exceeded: false,
  });
});

test('the strictest matching rule is the limit; exceeded only above it', (t) => {
  const rules = [
    { threshold: 60, page_pattern: '*' },
    { threshold: 40, page_pattern: '/checkout*' },
    { threshold: 5, page_pattern: '/other' },
  ];
  t.deepEqual(pageBudget(rules, '/checkout/pay', 40), { limit: 40, current: 40, exceeded: false });
  t.deepEqual(pageBudget(rules, '/checkout/pay', 40.1), { limit: 40, current: 40.1, exceeded: true });
  t.deepEqual(pageBudget(rules, '/home', 61), { limit: 60, current: 61, exceeded: true });
  t.deepEqual(pageBudget([{ threshold: 30, page_pattern: null }], '/x', 31), {
    limit: 30,
    current: 31,
    exceeded: true,
  });
});
