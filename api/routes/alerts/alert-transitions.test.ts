import test from 'ava';
import { SETTABLE_ALERT_STATUSES, alertTransition } from './alert-transitions.ts';
import { ALERT_STATUSES } from '../../read-models/alerts.schema.ts';

test('the full transition table: forward moves change, repeats are no-ops, backward moves and reopening are refused', (t) => {
  const table: Record<string, Record<string, string>> = {};
  for (const from of ALERT_STATUSES) {
    table[from] = {};
    for (const to of SETTABLE_ALERT_STATUSES) table[from][to] = alertTransition(from, to).kind;
  }
  t.deepEqual(table, {
    fired: { acknowledged: 'change', investigating: 'change', resolved: 'change' },
    acknowledged: { acknowledged: 'unchanged', investigating: 'change', resolved: 'change' },
    investigating: { acknowledged: 'refused', investigating: 'unchanged', resolved: 'change' },
    resolved: { acknowledged: 'refused', investigating: 'refused', resolved: 'unchanged' },
  });
});
