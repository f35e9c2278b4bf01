import { z } from 'zod';
import { Uuid } from './uuid.ts';

/**
 * Commands the API publishes on `commands.v1.<kind>` for roles that act on writes (the processor keeps
 * issue state in memory; the dispatcher sends alert.acknowledged / alert.resolved / issue.updated).
 * A command is a hint with the facts of one committed change: consumers should treat the database row as
 * the truth. `command_id` is also the stream's message id, so a retried publish is dropped.
 * Published inside the write's transaction before it commits: a failed publish rolls the write back (503).
 */
const Base = {
  command_id: Uuid(),
  org_id: Uuid(),
  site_id: Uuid(),
  /** Who made the change: a user's email or a key's display prefix. */
  actor: z.string(),
  /** When the change was made (ISO 8601, UTC). */
  at: z.iso.datetime(),
};

export const AlertStatusChangedSchema = z.object({
  kind: z.literal('alert.status_changed'),
  ...Base,
  alert_id: Uuid(),
  from: z.enum(['fired', 'acknowledged', 'investigating', 'resolved']),
  to: z.enum(['acknowledged', 'investigating', 'resolved']),
  resolved_reason: z.string().nullable(),
});
export type AlertStatusChanged = z.infer<typeof AlertStatusChangedSchema>;

export const IssueUpdatedSchema = z.object({
  kind: z.literal('issue.updated'),
  ...Base,
  issue_id: Uuid(),
  /** Field → { from, to } for each field the write changed (status, note, assigned_to, frozen, severity). */
  changes: z.record(z.string(), z.object({ from: z.unknown(), to: z.unknown() })),
});
export type IssueUpdated = z.infer<typeof IssueUpdatedSchema>;

export const CommandSchema = z.discriminatedUnion('kind', [AlertStatusChangedSchema, IssueUpdatedSchema]);
export type Command = z.infer<typeof CommandSchema>;

/** The `<kind>` of `commands.v1.<kind>` a command travels on. */
export function commandSubjectKind(c: Command): 'alert' | 'issue' {
  return c.kind === 'alert.status_changed' ? 'alert' : 'issue';
}
