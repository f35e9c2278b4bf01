import { useEffect, useState } from 'preact/hooks';
import { SIGNAL_CATALOG } from '../../../../shared/domain/signal-catalog.ts';
import { get, patch } from '../api.ts';
import { go, href, route } from '../route.ts';
import type { Issue, IssueDetail, ScorePoint } from '../types.ts';
import { ErrorNote, Field, Options, ScoreBadge, Show, Sparkline, Table, fmtDate, fmtScore, useData } from '../ui.tsx';
import { POLL_MS } from './overview.tsx';

export const STATUSES = ['open', 'triaged', 'in_progress', 'verified', 'resolved', 'ignored', 'regressed'];

function StatusOptions() {
  return <Options values={STATUSES} label={(s) => s.replace('_', ' ')} />;
}
/** The types an issue can have: the engine's catalogued signals, heaviest first. */
const TYPES = SIGNAL_CATALOG.map((d) => d.type);
type Triage = Partial<Pick<Issue, 'status' | 'assigned_to' | 'note' | 'frozen'>>;

/**
 * One issue's triage controls. Changes show at once (optimistic) and are sent; when the server refuses, the
 * issue returns to what it was and the refusal is said next to it.
 */
function TriageControls({ issue, onChange }: { issue: Issue; onChange: (next: Issue) => void }) {
  const [err, setErr] = useState<Error | null>(null);
  const [assignee, setAssignee] = useState(issue.assigned_to ?? '');
  const [note, setNote] = useState(issue.note ?? '');
  useEffect(() => {
    setAssignee(issue.assigned_to ?? '');
    setNote(issue.note ?? '');
  }, [issue.id]);
  const apply = (change: Triage) => {
    const before = issue;
    setErr(null);
    onChange({ ...issue, ...change });
    patch<Issue>(`/v1/manage/issues/${issue.id}`, change).then(
      (saved) => onChange({ ...before, ...change, ...pick(saved) }),
      (e: Error) => {
        onChange(before);
        setErr(e);
      },
    );
  };
  const id = issue.id.slice(0, 8);
  return (
    <div class="triage" role="group" aria-label={`Triage ${issue.title}`}>
      <Field label="Status">
        <select
          value={issue.status}
          onChange={(e) => apply({ status: e.currentTarget.value })}
          data-testid={`status-${id}`}
        >
          <StatusOptions />
        </select>
      </Field>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          apply({ assigned_to: assignee.trim() || null, note: note.trim() || null });
        }}
      >
        <Field label="Assignee">
          <input value={assignee} maxLength={256} onInput={(e) => setAssignee(e.currentTarget.value)} />
        </Field>
        <Field label="Note">
          <input value={note} maxLength={1000} onInput={(e) => setNote(e.currentTarget.value)} />
        </Field>
        <button type="submit" class="secondary">
          Save
        </button>
      </form>
      <label class="check">
        <input type="checkbox" checked={issue.frozen} onChange={(e) => apply({ frozen: e.currentTarget.checked })} />{' '}
        Frozen (nightly triage leaves it alone)
      </label>
      {err && <ErrorNote error={new Error(`Not saved, change undone: ${err.message}`)} />}
    </div>
  );
}

const pick = (i: Partial<Issue>): Triage => ({
  status: i.status,
  assigned_to: i.assigned_to,
  note: i.note,
  frozen: i.frozen,
});

/** Each issue's page score over 7 days: one trends read per distinct page. */
function usePageSparks(site: string, pages: string[]): Map<string, number[]> {
  const [m, setM] = useState(new Map<string, number[]>());
  const key = [...new Set(pages)].sort().join('\n');
  useEffect(() => {
    let live = true;
    void Promise.all(
      [...new Set(pages)].map((p) =>
        get<{ history: ScorePoint[] }>('/v1/query/trends', { site_id: site, page: p, days: 7 }).then(
          (t): [string, number[]] => [p, t.history.map((h) => h.score)],
          (): [string, number[]] => [p, []],
        ),
      ),
    ).then((rows) => live && setM(new Map(rows)));
    return () => {
      live = false;
    };
  }, [site, key]);
  return m;
}

export function IssuesScreen({ site }: { site: string }) {
  const q = route.value.query;
  const status = q.get('status') ?? 'open';
  const type = q.get('type') ?? '';
  const l = useData(
    () =>
      get<{ issues: Issue[]; total: number }>('/v1/query/issues', {
        site_id: site,
        status: status === 'all' ? undefined : status,
        limit: 100,
      }),
    [site, status],
    POLL_MS,
  );
  const sparks = usePageSparks(site, l.data?.issues.map((i) => i.page) ?? []);
  const setFilter = (k: string, v: string) => go('issues', { site, status, type, [k]: v });
  return (
    <>
      <h1>Issues</h1>
      <form class="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <Field label="Status">
          <select value={status} onChange={(e) => setFilter('status', e.currentTarget.value)}>
            <option value="all">all</option>
            <StatusOptions />
          </select>
        </Field>
        <Field label="Type">
          <select value={type} onChange={(e) => setFilter('type', e.currentTarget.value)}>
            <option value="">all types</option>
            <Options values={TYPES} label={(t) => t.replace(/_/g, ' ')} />
          </select>
        </Field>
      </form>
      <Show l={l} what="issues">
        {(d) => {
          const rows = d.issues.filter((i) => !type || i.type === type).sort((a, b) => b.severity - a.severity);
          if (rows.length === 0)
            return (
              <p class="card empty">
                No {status === 'all' ? '' : status.replace('_', ' ')} issues
                {type ? ` of type ${type.replace(/_/g, ' ')}` : ''}. Issues appear when visitors struggle with the same
                element; run <code>npm run demo</code> to see some.
              </p>
            );
          return (
            <ol class="issues">
              {rows.map((i) => (
                <li key={i.id} class="card issue" data-testid="issue-row">
                  <div class="issue-head">
                    <ScoreBadge score={i.severity} />
                    <div>
                      <h2 class="h3">
                        <a href={href(`issue/${i.id}`, { site })}>{i.title}</a>
                      </h2>
                      <p class="muted">
                        {i.type.replace(/_/g, ' ')} on <code>{i.selector ?? '?'}</code> · {i.page} · {i.signal_count}{' '}
                        signals · {i.affected_sessions} sessions · status <strong>{i.status.replace('_', ' ')}</strong>
                        {i.frozen ? ' · frozen' : ''}
                      </p>
                    </div>
                    <Sparkline values={sparks.get(i.page) ?? []} label={`${i.page} score, 7 days`} />
                  </div>
                  <TriageControls
                    issue={i}
                    onChange={(next) => l.set({ ...d, issues: d.issues.map((x) => (x.id === next.id ? next : x)) })}
                  />
                </li>
              ))}
            </ol>
          );
        }}
      </Show>
    </>
  );
}

export function IssueScreen({ site, id }: { site: string; id: string }) {
  const l = useData(
    () => get<IssueDetail>(`/v1/query/issues/${encodeURIComponent(id)}`, { site_id: site }),
    [site, id],
  );
  return (
    <Show l={l} what="the issue">
      {(i) => (
        <>
          <p>
            <a href={href('issues', { site })}>← Issues</a>
          </p>
          <h1>{i.title}</h1>
          <p class="muted">
            {i.type.replace(/_/g, ' ')} on <code>{i.selector ?? '?'}</code> at{' '}
            <a href={href('page', { site, page: i.page, selector: i.selector })}>{i.page}</a> · severity{' '}
            {fmtScore(i.severity)} · first seen {fmtDate(i.first_signal_at)} · last {fmtDate(i.last_signal_at)}
          </p>
          <section class="card" aria-labelledby="tri-h">
            <h2 id="tri-h">Triage</h2>
            <TriageControls issue={i} onChange={(n) => l.set({ ...i, ...n })} />
          </section>
          <section class="card" aria-labelledby="hyp-h">
            <h2 id="hyp-h">Hypothesis</h2>
            <p>{i.hypothesis ?? 'No hypothesis yet.'}</p>
          </section>
          <section class="card" aria-labelledby="dep-h">
            <h2 id="dep-h">Deploys</h2>
            {i.introduced_by_deploy?.version ? (
              <p>
                Appeared after deploy <strong>{i.introduced_by_deploy.version}</strong> (
                {fmtDate(i.introduced_by_deploy.recorded_at)}).
              </p>
            ) : (
              <p class="muted">No deploy is known to have introduced it.</p>
            )}
            {i.verifications.length === 0 ? (
              <p class="muted">No verification yet: record a deploy that fixes it, and Friction checks it.</p>
            ) : (
              <Table caption="Verification history" head={['Deploy', 'Result', 'Signals before → after', 'When']}>
                {i.verifications.map((v) => (
                  <tr key={`${v.deploy_id}${v.verified_at}`}>
                    <td>{v.deploy_version}</td>
                    <td>
                      <strong>{v.result.replace(/_/g, ' ')}</strong>
                    </td>
                    <td>
                      {v.signal_count_before} → {v.signal_count_after}
                    </td>
                    <td>{fmtDate(v.verified_at)}</td>
                  </tr>
                ))}
              </Table>
            )}
          </section>
          <section class="card" aria-labelledby="ev-h">
            <h2 id="ev-h">Evidence sessions</h2>
            {i.sessions.length === 0 ? (
              <p class="muted">No sessions recorded.</p>
            ) : (
              <ul class="plain">
                {i.sessions.map((s) => (
                  <li key={s.id}>
                    <a href={href(`session/${s.id}`, { site })}>Session {s.id.slice(0, 18)}</a>{' '}
                    <span class="muted">
                      {s.signals} signals · {fmtDate(s.timestamp)}
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </section>
        </>
      )}
    </Show>
  );
}

interface Timeline {
  session_id: string;
  page_count: number;
  signal_count: number;
  events: {
    type: string;
    signal?: string | null;
    selector?: string | null;
    page: string;
    occurred_at: string;
    label?: string | null;
  }[];
}

export function SessionScreen({ site, id }: { site: string; id: string }) {
  const l = useData(() => get<Timeline>('/v1/query/session', { site_id: site, session_id: id }), [site, id]);
  return (
    <Show l={l} what="the session">
      {(s) => (
        <>
          <p>
            <a
              href="#"
              onClick={(e) => {
                e.preventDefault();
                history.back();
              }}
            >
              ← Back
            </a>
          </p>
          <h1>Session timeline</h1>
          <p class="muted">
            {s.session_id} · {s.page_count} pages · {s.signal_count} signals
          </p>
          <ol class="timeline">
            {s.events.map((e, k) => (
              <li key={k} class={e.type === 'signal' ? 'ev-signal' : 'ev-view'}>
                <time>{new Date(e.occurred_at).toLocaleTimeString()}</time>{' '}
                {e.type === 'signal' ? (
                  <>
                    <strong>{(e.signal ?? 'signal').replace(/_/g, ' ')}</strong> on <code>{e.selector ?? '?'}</code>
                    {e.label ? ` (“${e.label}”)` : ''} at {e.page}
                  </>
                ) : (
                  <>
                    viewed <a href={href('page', { site, page: e.page })}>{e.page}</a>
                  </>
                )}
              </li>
            ))}
          </ol>
        </>
      )}
    </Show>
  );
}
