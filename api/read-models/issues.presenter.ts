import { isoOrNull } from '../http/present.ts';
import type { IssueFields } from './issues.queries.ts';
import type { IssueDto } from './issues.schema.ts';

const round1 = (v: number) => Math.round(v * 10) / 10;

/** Closed, and the live rule saw it signalling again since this closure (a mark older than resolved_at is an earlier closure's). */
function signallingAgain(r: IssueFields): boolean {
  if ((r.status !== 'resolved' && r.status !== 'verified') || r.signalling_again_at === null) return false;
  return r.resolved_at === null || new Date(r.signalling_again_at).getTime() >= new Date(r.resolved_at).getTime();
}

/**
 * An issue as the API shows it. The spec names two spellings for two fields (element_selector / selector,
 * type / signal_type): both are present.
 */
export function presentIssue(r: IssueFields): IssueDto {
  return {
    id: r.id,
    site_id: r.site_id,
    title: r.title,
    page: r.page,
    element_selector: r.selector,
    selector: r.selector,
    type: r.signal_type,
    signal_type: r.signal_type,
    label: r.label,
    signal_count: r.signal_count,
    affected_sessions: r.affected_sessions,
    severity: round1(r.severity),
    // The column holds only these statuses (every write goes through the same enum).
    status: r.status as IssueDto['status'],
    signalling_again: signallingAgain(r),
    note: r.note,
    assigned_to: r.assigned_to,
    frozen: r.frozen,
    merged_into: r.merged_into,
    last_signal_at: isoOrNull(r.last_signal_at),
    created_at: isoOrNull(r.created_at),
    updated_at: isoOrNull(r.updated_at),
  };
}
