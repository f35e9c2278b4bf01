/** Issue statuses: the spec's six plus `regressed` (set by renewed activity, filterable in the issue list). */
export const ISSUE_STATUSES = [
  'open',
  'triaged',
  'in_progress',
  'verified',
  'resolved',
  'ignored',
  'regressed',
] as const;
/** One of ISSUE_STATUSES. */
export type IssueStatus = (typeof ISSUE_STATUSES)[number];
/** Statuses of an issue that is still being worked on or waiting for work. */
export const ACTIVE_STATUSES: ReadonlySet<IssueStatus> = new Set<IssueStatus>([
  'open',
  'triaged',
  'in_progress',
  'regressed',
]);
