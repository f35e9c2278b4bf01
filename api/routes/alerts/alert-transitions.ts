import type { AlertStatus } from '../../read-models/alerts.schema.ts';

/**
 * Which alert status changes a person may make. An alert only moves forward: fired → acknowledged →
 * investigating → resolved, skipping steps allowed. Going back (investigating → acknowledged) would erase
 * who was on it, and a resolved alert is closed for good: if the problem returns, the rule fires a new alert
 * (its own history, its own notifications). Repeating the current status changes nothing and is accepted,
 * so a retried request is harmless. `fired` is only ever set by the evaluator.
 */
export const SETTABLE_ALERT_STATUSES = ['acknowledged', 'investigating', 'resolved'] as const;
export type SettableAlertStatus = (typeof SETTABLE_ALERT_STATUSES)[number];

const ORDER: Record<AlertStatus, number> = { fired: 0, acknowledged: 1, investigating: 2, resolved: 3 };

export type AlertTransition = { kind: 'change' } | { kind: 'unchanged' } | { kind: 'refused'; reason: string };

export function alertTransition(from: AlertStatus, to: SettableAlertStatus): AlertTransition {
  if (from === to) return { kind: 'unchanged' };
  if (from === 'resolved')
    return { kind: 'refused', reason: 'a resolved alert is closed; a recurrence fires a new alert' };
  if (ORDER[to] < ORDER[from])
    return { kind: 'refused', reason: `an alert moves forward only: ${from} cannot go back to ${to}` };
  return { kind: 'change' };
}
