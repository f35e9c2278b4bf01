import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, del, post } from './api.ts';
import type { Delivery } from './types.ts';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | Error | undefined;
  loading: boolean;
  reload(): void;
  /** Replaces the data locally (optimistic updates). */
  set(next: T): void;
}

/**
 * Loads `fn` when `key` changes; with `pollMs`, reloads quietly while the tab is visible (live updates), keeping the
 * shown data until the new answer arrives, so the screen never blanks or jumps.
 */
export function useData<T>(fn: () => Promise<T>, key: unknown[], pollMs?: number): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | Error | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  const run = useCallback(() => {
    const mine = ++seq.current;
    setLoading(true);
    fn().then(
      (d) => {
        if (mine !== seq.current) return;
        setData(d);
        setError(undefined);
        setLoading(false);
      },
      (e: Error) => {
        if (mine !== seq.current) return;
        setError(e);
        setLoading(false);
      },
    );
    // `key` lists what `fn` reads: a new key is a new load.
  }, key);
  useEffect(() => {
    setData(undefined);
    run();
    if (!pollMs) return;
    const t = setInterval(() => {
      if (document.visibilityState === 'visible') run();
    }, pollMs);
    return () => clearInterval(t);
  }, [run]);
  return { data, error, loading, reload: run, set: setData };
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" role="status">
      Loading {what}…
    </p>
  );
}

export function ErrorNote({ error }: { error: Error }) {
  return (
    <p class="error" role="alert">
      {error.message}
    </p>
  );
}

/** Loading, error and data in one: children render only with data. */
export function Show<T>({ l, what, children }: { l: Loaded<T>; what: string; children: (d: T) => ComponentChildren }) {
  if (l.data !== undefined) return <>{children(l.data)}</>;
  if (l.error) return <ErrorNote error={l.error} />;
  return <Loading what={what} />;
}

export const fmtScore = (n: number | null | undefined): string => (n === null || n === undefined ? '–' : n.toFixed(1));
export const fmtDate = (s: string | null | undefined): string => (s ? new Date(s).toLocaleString() : '–');
export const fmtDay = (s: string | null | undefined): string => (s ? new Date(s).toLocaleDateString() : '–');

/** Scores say their level in words and numbers, colour only adds to it. */
export function level(score: number): 'high' | 'medium' | 'low' {
  return score >= 60 ? 'high' : score >= 30 ? 'medium' : 'low';
}
export function ScoreBadge({ score }: { score: number }) {
  const l = level(score);
  return (
    <span class={`badge score-${l}`} title={`confusion score ${fmtScore(score)} of 100 (${l})`}>
      {fmtScore(score)}
      <span class="sr-only"> of 100, {l}</span>
    </span>
  );
}

const ARROWS: Record<string, string> = { up: '↑', down: '↓', stable: '→' };
export function Trend({ trend }: { trend: string }) {
  const word = trend === 'up' ? 'rising (worse)' : trend === 'down' ? 'falling (better)' : 'stable';
  return (
    <span class={`trend trend-${trend}`} title={word}>
      <span aria-hidden="true">{ARROWS[trend] ?? '·'}</span> <span class="trend-word">{trend}</span>
    </span>
  );
}

export interface Point {
  t: number;
  v: number;
}
export interface Marker {
  t: number;
  label: string;
  kind: string;
}

/** A time series as SVG: labelled axes, optional vertical markers (deploys). */
export function LineChart({
  points,
  markers = [],
  label,
  height = 180,
  max = 100,
}: {
  points: Point[];
  markers?: Marker[];
  label: string;
  height?: number;
  max?: number;
}) {
  const W = 640;
  const H = height;
  const pad = { l: 34, r: 8, t: 10, b: 22 };
  if (points.length === 0) return <p class="muted">No score history yet.</p>;
  const t0 = Math.min(...points.map((p) => p.t), ...markers.map((m) => m.t));
  const t1 = Math.max(...points.map((p) => p.t), ...markers.map((m) => m.t), t0 + 1);
  const x = (t: number) => pad.l + ((t - t0) / (t1 - t0)) * (W - pad.l - pad.r);
  const y = (v: number) => pad.t + (1 - v / max) * (H - pad.t - pad.b);
  const d = points.map((p, i) => `${i ? 'L' : 'M'}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join('');
  const last = points[points.length - 1];
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`${label}: ${points.length} points, latest ${fmtScore(last.v)}${markers.length ? `, ${markers.length} deploy markers` : ''}`}
      >
        {[0, 50, 100].map((g) => (
          <g key={g}>
            <line class="grid" x1={pad.l} x2={W - pad.r} y1={y(g)} y2={y(g)} />
            <text class="axis" x={pad.l - 6} y={y(g) + 4} text-anchor="end">
              {g}
            </text>
          </g>
        ))}
        <text class="axis" x={pad.l} y={H - 4}>
          {fmtDay(new Date(t0).toISOString())}
        </text>
        <text class="axis" x={W - pad.r} y={H - 4} text-anchor="end">
          {fmtDay(new Date(t1).toISOString())}
        </text>
        {markers.map((m) => (
          <g key={`${m.t}${m.label}`} class={`marker marker-${m.kind}`}>
            <line x1={x(m.t)} x2={x(m.t)} y1={pad.t} y2={H - pad.b} />
            <title>{m.label}</title>
          </g>
        ))}
        <path class="line" d={d} />
        {points.length < 40 &&
          points.map((p) => (
            <circle key={p.t} class="dot" cx={x(p.t)} cy={y(p.v)} r="3">
              <title>{`${fmtDay(new Date(p.t).toISOString())}: ${fmtScore(p.v)}`}</title>
            </circle>
          ))}
      </svg>
      {markers.length > 0 && (
        <figcaption class="muted">Vertical lines: deploys ({markers.map((m) => m.label).join(', ')})</figcaption>
      )}
    </figure>
  );
}

export function Sparkline({ values, label }: { values: number[]; label: string }) {
  if (values.length < 2)
    return <span class="muted spark-empty">{values.length ? fmtScore(values[0]) : 'no history'}</span>;
  const W = 80;
  const H = 20;
  const max = Math.max(...values, 1);
  const d = values
    .map(
      (v, i) =>
        `${i ? 'L' : 'M'}${((i / (values.length - 1)) * W).toFixed(1)},${(H - 2 - (v / max) * (H - 4)).toFixed(1)}`,
    )
    .join('');
  return (
    <svg
      class="spark"
      viewBox={`0 0 ${W} ${H}`}
      width={W}
      height={H}
      role="img"
      aria-label={`${label}: ${values.map(fmtScore).join(', ')}`}
    >
      <path d={d} />
    </svg>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState<string>('');
  return (
    <span>
      <button
        type="button"
        class="secondary"
        onClick={() =>
          navigator.clipboard.writeText(text).then(
            () => setDone('Copied'),
            () => setDone('Copy failed: select the text and copy it'),
          )
        }
      >
        {label}
      </button>
      <span role="status" class="muted copy-status">
        {done}
      </span>
    </span>
  );
}

/** What a new site shows until data arrives: the SDK tag, and the demo command. */
export function GetStarted({ siteId }: { siteId: string }) {
  const [key, setKey] = useState<string | null>(null);
  const [err, setErr] = useState<Error | null>(null);
  const snippet = `<script src="${location.origin}/v1/sdk.js" data-key="${key ?? 'YOUR_PUBLISHABLE_KEY'}" defer></script>`;
  return (
    <section class="card empty" aria-labelledby="start-h">
      <h2 id="start-h">No data yet: add the SDK to your site</h2>
      <p>Paste this tag into every page of your site. Friction starts scoring pages after the first visits.</p>
      <pre class="snippet" tabIndex={0}>
        <code>{snippet}</code>
      </pre>
      <div class="row">
        <CopyButton text={snippet} label="Copy snippet" />
        {!key && (
          <button
            type="button"
            class="secondary"
            onClick={() =>
              post<{ key: string }>('/v1/manage/keys', {
                site_id: siteId,
                key_type: 'publishable',
                scopes: ['ingest:write'],
                name: 'dashboard snippet',
              }).then((k) => setKey(k.key), setErr)
            }
          >
            Issue a publishable key for it
          </button>
        )}
      </div>
      {err && <ErrorNote error={err} />}
      <p>
        Just trying Friction? Run <code>npm run demo</code> beside <code>npm start</code> to send realistic traffic to
        the demo site.
      </p>
    </section>
  );
}

export function Field({ label, children, hint }: { label: string; children: ComponentChildren; hint?: string }) {
  return (
    <label class="field">
      <span>{label}</span>
      {children}
      {hint && <small class="muted">{hint}</small>}
    </label>
  );
}

/** One `<option>` per value, shown as `label` of it (the value itself unless given). */
export function Options({ values, label }: { values: readonly string[]; label?: (v: string) => string }) {
  return (
    <>
      {values.map((v) => (
        <option key={v} value={v}>
          {label ? label(v) : v}
        </option>
      ))}
    </>
  );
}

export function Table({ caption, head, children }: { caption: string; head: string[]; children: ComponentChildren }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={caption}>
      <table>
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            {head.map((h) => (
              <th scope="col" key={h}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/**
 * A form's submit: `run(act)` marks it busy, clears the last refusal and runs `act`; a refusal is kept to show,
 * nothing is reset on failure.
 */
export function useSubmit(): {
  busy: boolean;
  err: Error | null;
  onSubmit(act: () => Promise<unknown>): (e: Event) => void;
} {
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<Error | null>(null);
  return {
    busy,
    err,
    onSubmit: (act) => (e) => {
      e.preventDefault();
      setBusy(true);
      setErr(null);
      act().then(
        () => setBusy(false),
        (x: Error) => {
          setBusy(false);
          setErr(x);
        },
      );
    },
  };
}

/** A delete button: asks `question` first when given, then deletes `path` and calls `done`; a refusal goes to `failed`. */
export function DeleteButton({
  path,
  label,
  name,
  question,
  done,
  failed,
}: {
  path: string;
  label: string;
  /** What is deleted, for screen readers ("Revoke" alone does not say what). */
  name: string;
  question?: string;
  done: () => void;
  failed?: (e: Error) => void;
}) {
  return (
    <button
      type="button"
      class="danger"
      onClick={() => {
        if (question !== undefined && !confirm(question)) return;
        del(path).then(done, failed);
      }}
    >
      {label}
      <span class="sr-only"> {name}</span>
    </button>
  );
}

/** A delivery's outcome in one cell: its status, the HTTP status and the error when there are. */
export function DeliveryResult({ d }: { d: Pick<Delivery, 'status' | 'http_status' | 'error'> }) {
  return (
    <td>
      {d.status}
      {d.http_status ? ` (${d.http_status})` : ''}
      {d.error ? `: ${d.error}` : ''}
    </td>
  );
}
