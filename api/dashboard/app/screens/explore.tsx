import { createContext, type ComponentChildren } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { ApiError, post } from '../api.ts';
import { go, href, route } from '../route.ts';
import { ErrorNote, Options, Show, Table, fmtDate, useData } from '../ui.tsx';

/*
 * The Explore query builder (docs/explorer.md). The names and bounds below mirror api/read-models/explore.schema.ts:
 * the dashboard bundles no server code (zod alone would outweigh this screen), and the server validates every query
 * anyway, so a drift shows as a 400 naming the field, next to that field.
 */
const TEXT_FIELDS = ['signal', 'page', 'source', 'event_type'] as const;
const BOOLEAN_FIELDS = ['confused', 'converted'] as const;
const FIELDS = [...TEXT_FIELDS, ...BOOLEAN_FIELDS] as const;
const METRICS = ['count', 'avg_pageviews', 'conversion_rate', 'avg_dwell_ms', 'bounce_rate'] as const;
const GROUP_BYS = ['page', 'source', 'day', 'signal', 'cohort'] as const;
const MAX_FILTERS = 12;

type FieldName = (typeof FIELDS)[number];
type Metric = (typeof METRICS)[number];
type GroupBy = (typeof GROUP_BYS)[number];
type Filter = { field: FieldName; op: string; value: string | boolean };
interface Query {
  window_days: number;
  filters: Filter[];
  output: { mode: 'list'; limit: number } | { mode: 'measure'; metric: Metric; group_by?: GroupBy };
}
interface Session {
  session_id: string;
  first_seen: string;
  last_seen: string;
  pages: string[];
  page_count: number;
  signals: Record<string, number>;
  converted: boolean;
  source: string;
  device: string;
  app_version: string | null;
}
interface Group {
  key: string | null;
  value: number | null;
  sessions: number;
}
type Result =
  | { mode: 'list'; sessions: Session[] }
  | {
      mode: 'measure';
      metric: Metric;
      unit: string;
      group_by: GroupBy | null;
      value: number | null;
      sessions: number;
      groups: Group[];
    };
interface Answer {
  query: Query;
  result: Result;
  meta: { truncated: boolean; window: { from: string; to: string } };
}

/** A filter row as edited: the value is text in its control until the query is built. */
interface Row {
  field: FieldName;
  op: string;
  value: string;
}
interface Form {
  window: string;
  rows: Row[];
  mode: 'list' | 'measure';
  limit: string;
  metric: Metric;
  groupBy: GroupBy | '';
}

const isBool = (f: FieldName) => (BOOLEAN_FIELDS as readonly string[]).includes(f);
const words = (s: string) => s.replace(/_/g, ' ');
const DEFAULT_FORM: Form = { window: '7', rows: [], mode: 'list', limit: '100', metric: 'count', groupBy: '' };

/** The URL's query (`q`, the JSON the API takes) as a form; a query the form cannot show falls back to defaults. */
function toForm(q: Partial<Query> | null): Form {
  if (!q) return DEFAULT_FORM;
  const out = q.output;
  return {
    window: String(q.window_days ?? DEFAULT_FORM.window),
    rows: (Array.isArray(q.filters) ? q.filters : []).map((f) => ({
      field: f.field,
      op: f.op,
      value: String(f.value ?? ''),
    })),
    mode: out?.mode === 'measure' ? 'measure' : 'list',
    limit: out?.mode === 'list' ? String(out.limit ?? DEFAULT_FORM.limit) : DEFAULT_FORM.limit,
    metric: out?.mode === 'measure' ? out.metric : 'count',
    groupBy: out?.mode === 'measure' ? (out.group_by ?? '') : '',
  };
}

/** The form as the API's query. Numbers are sent as typed, so an out-of-range one comes back as the server's 400. */
function toQuery(f: Form): Query {
  return {
    window_days: Number(f.window),
    filters: f.rows.map((r) => ({ field: r.field, op: r.op, value: isBool(r.field) ? r.value === 'true' : r.value })),
    output:
      f.mode === 'list'
        ? { mode: 'list', limit: Number(f.limit) }
        : { mode: 'measure', metric: f.metric, ...(f.groupBy ? { group_by: f.groupBy } : {}) },
  };
}

function parseQ(raw: string | null): { q: Query | null; bad: boolean } {
  if (!raw) return { q: null, bad: false };
  try {
    const q = JSON.parse(raw) as Query;
    return typeof q === 'object' && q !== null ? { q, bad: false } : { q: null, bad: true };
  } catch {
    return { q: null, bad: true };
  }
}

function fmtValue(v: number | null, unit: string): string {
  if (v === null) return '–';
  if (unit === 'ratio') return `${(v * 100).toFixed(1)}%`;
  if (unit === 'ms') return `${(v / 1000).toFixed(1)} s`;
  if (unit === 'sessions') return String(v);
  return v.toFixed(2);
}

/** The 400's `details` by path (`window_days`, `filters[2].value`, `output.limit`). */
function problems(e: Error | undefined): Map<string, string> {
  const m = new Map<string, string>();
  if (e instanceof ApiError && e.status === 400 && Array.isArray(e.details))
    for (const d of e.details as { path?: string; message?: string }[])
      if (typeof d.path === 'string') m.set(d.path, d.message ?? 'invalid');
  return m;
}

/** The paths that have a control on the form now (the others are listed with the error). */
function shownPaths(f: Form): Set<string> {
  const out = f.mode === 'list' ? ['output.limit'] : ['output.metric', 'output.group_by'];
  const rows = f.rows.flatMap((_, i) => ['field', 'op', 'value'].map((k) => `filters[${i}].${k}`));
  return new Set(['window_days', 'filters', ...rows, ...out]);
}

/** The server's refusals of the last run, by path: every control of the form looks up its own. */
const Refusals = createContext<Map<string, string>>(new Map());

/** A labelled control with the server's refusal for its path, if any, beside it and announced with it. */
function Labelled({
  label,
  path,
  children,
}: {
  label: string;
  path: string;
  children: (describedBy: string | undefined) => ComponentChildren;
}) {
  const msg = useContext(Refusals).get(path);
  const id = `err-${path.replace(/[^a-z0-9]/gi, '-')}`;
  return (
    <label class="field">
      <span>{label}</span>
      {children(msg ? id : undefined)}
      {msg && (
        <small class="error" id={id} data-testid="field-error">
          <code>{path}</code>: {msg}
        </small>
      )}
    </label>
  );
}

/** A whole number typed as text, labelled, with the API's complaint about `path` beside it. */
function NumberField({
  label,
  path,
  value,
  onValue,
}: {
  label: string;
  path: string;
  value: string;
  onValue: (v: string) => void;
}) {
  return (
    <Labelled label={label} path={path}>
      {(d) => (
        <input
          type="number"
          inputMode="numeric"
          value={value}
          aria-describedby={d}
          aria-invalid={d ? true : undefined}
          onInput={(e) => onValue(e.currentTarget.value)}
        />
      )}
    </Labelled>
  );
}

function Bars({ groups, unit, label }: { groups: Group[]; unit: string; label: string }) {
  const shown = groups.filter((g) => g.value !== null).slice(0, 15);
  if (shown.length === 0) return null;
  const max = Math.max(...shown.map((g) => Math.abs(g.value!)), Number.MIN_VALUE);
  const rowH = 22;
  // Narrow, so its text stays readable when a 390 px screen scales it down.
  const W = 420;
  const labelW = 130;
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${W} ${shown.length * rowH + 4}`}
        role="img"
        aria-label={`${label}: ${shown.map((g) => `${g.key ?? 'none'} ${fmtValue(g.value, unit)}`).join(', ')}`}
      >
        {shown.map((g, i) => (
          <g key={g.key ?? '\u0000'}>
            <text class="axis" x={labelW - 6} y={i * rowH + 15} text-anchor="end">
              {(g.key ?? '(none)').slice(0, 20)}
            </text>
            <rect
              class="bar"
              x={labelW}
              y={i * rowH + 3}
              height={rowH - 6}
              width={Math.max(1, (Math.abs(g.value!) / max) * (W - labelW - 70))}
            />
            <text class="axis" x={labelW + (Math.abs(g.value!) / max) * (W - labelW - 70) + 6} y={i * rowH + 15}>
              {fmtValue(g.value, unit)}
            </text>
          </g>
        ))}
      </svg>
      {groups.length > shown.length && <figcaption class="muted">The chart shows the first 15 groups.</figcaption>}
    </figure>
  );
}

function Results({ a, site }: { a: Answer; site: string }) {
  const r = a.result;
  const cut = a.meta.truncated ? <p class="muted">More matched than the answer holds (truncated).</p> : null;
  if (r.mode === 'list') {
    if (r.sessions.length === 0)
      return (
        <p class="card empty" role="status" data-testid="explore-empty">
          No session matched. Widen the window, remove a filter, or switch the environment.
        </p>
      );
    return (
      <>
        <p role="status" data-testid="explore-count">
          {r.sessions.length} sessions, newest first
        </p>
        <Table
          caption="Matching sessions"
          head={[
            'Session',
            'First seen',
            'Last seen',
            'Pages',
            'Signals',
            'Converted',
            'Source',
            'Device',
            'App version',
          ]}
        >
          {r.sessions.map((s) => (
            <tr key={s.session_id} data-testid="explore-session">
              <td>
                <a href={href(`session/${encodeURIComponent(s.session_id)}`, { site })}>{s.session_id}</a>
              </td>
              <td>{fmtDate(s.first_seen)}</td>
              <td>{fmtDate(s.last_seen)}</td>
              <td>
                {s.pages.join(', ')}
                {s.page_count > s.pages.length ? ` (+${s.page_count - s.pages.length})` : ''}
              </td>
              <td>
                {Object.entries(s.signals)
                  .map(([k, v]) => `${words(k)} ${v}`)
                  .join(', ') || '–'}
              </td>
              <td>{s.converted ? 'yes' : 'no'}</td>
              <td>{s.source}</td>
              <td>{s.device}</td>
              <td>{s.app_version ?? '–'}</td>
            </tr>
          ))}
        </Table>
        {cut}
      </>
    );
  }
  const label = `${words(r.metric)}${r.group_by ? ` by ${r.group_by}` : ''}`;
  return (
    <>
      <p class="big" data-testid="explore-value">
        {fmtValue(r.value, r.unit)}
      </p>
      <p class="muted" role="status">
        {words(r.metric)} over {r.sessions} matching sessions
      </p>
      {r.group_by &&
        (r.groups.length === 0 ? (
          <p class="muted">No group: no session matched.</p>
        ) : (
          <>
            <Bars groups={r.groups} unit={r.unit} label={label} />
            <Table caption={`${label}, by group`} head={[r.group_by, words(r.metric), 'Sessions']}>
              {r.groups.map((g) => (
                <tr key={g.key ?? '\u0000'} data-testid="explore-group">
                  <td>{g.key ?? '(none)'}</td>
                  <td>{fmtValue(g.value, r.unit)}</td>
                  <td>{g.sessions}</td>
                </tr>
              ))}
            </Table>
          </>
        ))}
      {cut}
    </>
  );
}

export function ExploreScreen({ site }: { site: string }) {
  const params = route.value.query;
  const env = params.get('environment') === 'staging' ? 'staging' : 'production';
  const raw = params.get('q');
  const { q, bad } = parseQ(raw);
  const [form, setForm] = useState<Form>(() => toForm(q));
  // Back, forward or an edited address: the form shows the query the URL holds.
  useEffect(() => setForm(toForm(parseQ(raw).q)), [raw]);
  const l = useData<Answer | null>(
    () => (q ? post<Answer>('/v1/query/explore', q, { site_id: site, environment: env }) : Promise.resolve(null)),
    [site, env, raw],
  );
  const errs = problems(l.error);
  const unshown = [...errs].filter(([p]) => !shownPaths(form).has(p));
  const set = (patch: Partial<Form>) => setForm({ ...form, ...patch });
  const setRow = (i: number, patch: Partial<Row>) =>
    set({ rows: form.rows.map((r, j) => (j === i ? { ...r, ...patch } : r)) });

  const run = (e: Event) => {
    e.preventDefault();
    const next = JSON.stringify(toQuery(form));
    // The query lives in the URL, so a reload or a shared link runs it again; the same query again is a fresh run.
    if (next === raw) l.reload();
    else go('explore', { site, environment: env, q: next });
  };

  return (
    <Refusals.Provider value={errs}>
      <h1>Explorer</h1>
      <form class="card explore" onSubmit={run} aria-describedby="explore-help">
        <p id="explore-help" class="muted">
          Choose which sessions to look at (filters are AND-ed), then list them or measure them.
        </p>
        <div class="row">
          <label class="field">
            <span>Environment</span>
            <select value={env} onChange={(e) => go('explore', { site, environment: e.currentTarget.value, q: raw })}>
              <option value="production">production</option>
              <option value="staging">staging</option>
            </select>
          </label>
          <NumberField
            label="Window (days, 1-90)"
            path="window_days"
            value={form.window}
            onValue={(window) => set({ window })}
          />
        </div>
        <fieldset class="filters-set">
          <legend>
            Filters ({form.rows.length} of {MAX_FILTERS})
          </legend>
          {errs.has('filters') && (
            <p class="error" data-testid="field-error">
              <code>filters</code>: {errs.get('filters')}
            </p>
          )}
          {form.rows.length === 0 && <p class="muted">No filter: every session of the window.</p>}
          {form.rows.map((r, i) => {
            const n = i + 1;
            return (
              <div class="row filter-row" key={i} role="group" aria-label={`Filter ${n}`} data-testid="filter-row">
                <Labelled label={`Filter ${n} field`} path={`filters[${i}].field`}>
                  {(d) => (
                    <select
                      value={r.field}
                      aria-describedby={d}
                      onChange={(e) => {
                        const field = e.currentTarget.value as FieldName;
                        // Booleans take is / is_not and true / false; text keeps what was typed.
                        if (isBool(field))
                          setRow(i, {
                            field,
                            op: r.op === 'contains' ? 'is' : r.op,
                            value: isBool(r.field) ? r.value : 'true',
                          });
                        else setRow(i, { field, value: isBool(r.field) ? '' : r.value });
                      }}
                    >
                      <Options values={FIELDS} label={words} />
                    </select>
                  )}
                </Labelled>
                <Labelled label={`Filter ${n} operator`} path={`filters[${i}].op`}>
                  {(d) => (
                    <select
                      value={r.op}
                      aria-describedby={d}
                      onChange={(e) => setRow(i, { op: e.currentTarget.value })}
                    >
                      <option value="is">is</option>
                      <option value="is_not">is not</option>
                      {!isBool(r.field) && <option value="contains">contains</option>}
                    </select>
                  )}
                </Labelled>
                <Labelled label={`Filter ${n} value`} path={`filters[${i}].value`}>
                  {(d) =>
                    isBool(r.field) ? (
                      <select
                        value={r.value}
                        aria-describedby={d}
                        onChange={(e) => setRow(i, { value: e.currentTarget.value })}
                      >
                        <option value="true">true</option>
                        <option value="false">false</option>
                      </select>
                    ) : (
                      <input
                        type="text"
                        value={r.value}
                        aria-describedby={d}
                        aria-invalid={d ? true : undefined}
                        placeholder={r.field === 'page' ? '/checkout' : r.field === 'signal' ? 'rage_click' : ''}
                        onInput={(e) => setRow(i, { value: e.currentTarget.value })}
                      />
                    )
                  }
                </Labelled>
                <button
                  type="button"
                  class="secondary"
                  aria-label={`Remove filter ${n}`}
                  onClick={() => set({ rows: form.rows.filter((_, j) => j !== i) })}
                >
                  Remove
                </button>
              </div>
            );
          })}
          <div class="row">
            <button
              type="button"
              class="secondary"
              disabled={form.rows.length >= MAX_FILTERS}
              onClick={() => set({ rows: [...form.rows, { field: 'page', op: 'is', value: '' }] })}
            >
              Add filter
            </button>
          </div>
        </fieldset>
        <fieldset>
          <legend>Output</legend>
          <div class="row">
            {(['list', 'measure'] as const).map((m) => (
              <label class="check" key={m}>
                <input type="radio" name="mode" value={m} checked={form.mode === m} onChange={() => set({ mode: m })} />
                {m === 'list' ? 'List sessions' : 'Measure'}
              </label>
            ))}
          </div>
          <div class="row">
            {form.mode === 'list' ? (
              <NumberField
                label="Sessions to list (1-500)"
                path="output.limit"
                value={form.limit}
                onValue={(limit) => set({ limit })}
              />
            ) : (
              <>
                <Labelled label="Metric" path="output.metric">
                  {(d) => (
                    <select
                      value={form.metric}
                      aria-describedby={d}
                      onChange={(e) => set({ metric: e.currentTarget.value as Metric })}
                    >
                      <Options values={METRICS} label={words} />
                    </select>
                  )}
                </Labelled>
                <Labelled label="Group by" path="output.group_by">
                  {(d) => (
                    <select
                      value={form.groupBy}
                      aria-describedby={d}
                      onChange={(e) => set({ groupBy: e.currentTarget.value as GroupBy | '' })}
                    >
                      <option value="">(no grouping)</option>
                      <Options values={GROUP_BYS} />
                    </select>
                  )}
                </Labelled>
              </>
            )}
          </div>
        </fieldset>
        <div class="row">
          <button type="submit">Run query</button>
        </div>
      </form>
      <section aria-labelledby="explore-results-h">
        <h2 id="explore-results-h">Results</h2>
        {bad ? (
          <ErrorNote error={new Error('The link holds a query that is not JSON: build the query again above.')} />
        ) : !q ? (
          <p class="card empty" data-testid="explore-empty">
            No query run yet. Pick a window, add filters (for example page is /checkout, or converted is false), choose
            to list the sessions or measure a metric, then press Run query. The query is kept in the address, so the
            link shows the same results to whoever opens it.
          </p>
        ) : l.error && errs.size > 0 ? (
          <div class="error" role="alert">
            <p>{l.error.message}: see the field marked above.</p>
            {/* A path no control stands for (a whole filter, the output) is named here instead. */}
            {unshown.length > 0 && (
              <ul>
                {unshown.map(([p, m]) => (
                  <li key={p}>
                    <code>{p}</code>: {m}
                  </li>
                ))}
              </ul>
            )}
          </div>
        ) : (
          <Show l={l} what="results">
            {(a) => (a ? <Results a={a} site={site} /> : null)}
          </Show>
        )}
      </section>
    </Refusals.Provider>
  );
}
