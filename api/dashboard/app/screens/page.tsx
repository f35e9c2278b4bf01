import { useEffect, useRef, useState } from 'preact/hooks';
import { get } from '../api.ts';
import { drawHeat, type HeatPoint } from '../heatmap.ts';
import { go, href, route } from '../route.ts';
import type { Deploy, Issue, Scores, ScorePoint } from '../types.ts';
import { Field, LineChart, Options, ScoreBadge, Show, Table, Trend, fmtScore, useData } from '../ui.tsx';

interface PageData {
  page: string;
  score: number;
  trend: string;
  dominant_signal: string | null;
  score_history: ScorePoint[];
  issues: Issue[];
  elements: {
    selector: string;
    label: string | null;
    signals: Record<string, number>;
    friction_score: number;
    signal_count: number;
    dominant_signal: string | null;
  }[];
  budget: { limit: number | null; current: number; exceeded: boolean };
  deploys: Deploy[];
}
interface PagePoint {
  vx: number;
  vy: number;
  px?: number;
  py?: number;
  signal: string;
  el?: string;
}
type Shot =
  | { screenshot: { width: number; height: number; image_url: string; captured_at: string; device: string } }
  | { screenshot: null; reason: string };
type Device = 'all' | 'desktop' | 'mobile';

/** The image URL as a path of this origin (the API may name its public base URL; CSP allows only 'self'). */
const samePath = (u: string): string => {
  const x = new URL(u, location.href);
  return `${x.pathname}${x.search}`;
};

/**
 * Where the element sits on the page, in page fractions. The API gives no element geometry, so it is read from the
 * element's own signals' page positions: the box of where its clicks landed, the outer 1% on each side left off as stray points.
 */
function elementBox(points: PagePoint[], selector: string): { x: number; y: number; w: number; h: number } | null {
  const mine = points.filter((p) => p.el === selector);
  if (mine.length < 3) return null;
  const q = (v: number[], f: number) => v.sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(f * v.length))];
  const xs = mine.map((p) => p.px ?? p.vx);
  const ys = mine.map((p) => p.py ?? p.vy);
  const x0 = q(xs, 0.01);
  const y0 = q(ys, 0.01);
  return { x: x0, y: y0, w: Math.max(0.01, q(xs, 0.99) - x0), h: Math.max(0.01, q(ys, 0.99) - y0) };
}

function Heat({ points, label, radius = 18 }: { points: HeatPoint[]; label: string; radius?: number }) {
  const ref = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const c = ref.current;
    if (!c) return;
    const r = c.getBoundingClientRect();
    c.width = Math.max(1, Math.round(r.width));
    c.height = Math.max(1, Math.round(r.height));
    drawHeat(c, points, radius);
  }, [points, radius]);
  return <canvas ref={ref} class="heat" role="img" aria-label={label} />;
}

function PageHeatmap({ site, page, selector }: { site: string; page: string; selector: string | null }) {
  const [device, setDevice] = useState<Device>('desktop');
  const heat = useData(
    () =>
      get<{ count: number; points: PagePoint[] }>('/v1/query/page-heatmap', {
        site_id: site,
        page,
        device: device === 'all' ? undefined : device,
      }),
    [site, page, device],
  );
  const shot = useData(
    () =>
      get<Shot>('/v1/query/page-screenshot', { site_id: site, page, device: device === 'all' ? 'desktop' : device }),
    [site, page, device],
  );
  const el = useData(
    () =>
      selector
        ? get<{ count: number; points: { rx: number; ry: number; signal: string }[] }>('/v1/query/element-heatmap', {
            site_id: site,
            page,
            selector,
          })
        : Promise.resolve(null),
    [site, page, selector],
  );
  const s = shot.data?.screenshot ?? null;
  const pts = heat.data?.points ?? [];
  const usePage = pts.some((p) => p.px !== undefined);
  const box = selector ? elementBox(pts, selector) : null;
  return (
    <section class="card" aria-labelledby="heat-h">
      <h2 id="heat-h">Heatmap</h2>
      <div class="row" role="radiogroup" aria-label="Device">
        {(['desktop', 'mobile', 'all'] as const).map((d) => (
          <label key={d} class="check">
            <input type="radio" name="device" value={d} checked={device === d} onChange={() => setDevice(d)} />{' '}
            {d === 'mobile' ? 'mobile and tablet' : d === 'all' ? 'all devices' : 'desktop'}
          </label>
        ))}
      </div>
      <p class="muted" role="status" data-testid="heat-status">
        {heat.data ? `${heat.data.count} signals (${device}) ` : 'Loading signals… '}
        {shot.data
          ? s
            ? `over the screenshot taken ${new Date(s.captured_at).toLocaleString()}`
            : `no screenshot (${'reason' in shot.data ? shot.data.reason.replace(/_/g, ' ') : ''}): heat drawn on a blank page`
          : ''}
      </p>
      <div class={`stage ${s ? (s.device === 'mobile' ? 'stage-mobile' : '') : 'stage-blank'}`}>
        {s && (
          <img
            src={samePath(s.image_url)}
            alt={`Screenshot of ${page} (${s.device})`}
            width={s.width}
            height={s.height}
          />
        )}
        <Heat
          points={pts.map((p) => (usePage && s ? { x: p.px ?? p.vx, y: p.py ?? p.vy } : { x: p.vx, y: p.vy }))}
          label={`Page heatmap of ${page}: ${pts.length} points`}
        />
        {selector && el.data && box && (
          <div
            class="el-box"
            ref={(d) => {
              if (d) {
                d.style.left = `${box.x * 100}%`;
                d.style.top = `${box.y * 100}%`;
                d.style.width = `${box.w * 100}%`;
                d.style.height = `${box.h * 100}%`;
              }
            }}
          >
            <Heat
              points={el.data.points.map((p) => ({ x: p.rx, y: p.ry }))}
              radius={10}
              label={`Element heatmap of ${selector}: ${el.data.count} signals`}
            />
          </div>
        )}
      </div>
      {selector && el.data && (
        <p class="muted">
          Element <code>{selector}</code>: {el.data.count} signals
          {box
            ? ', drawn over where its clicks landed on the page'
            : ' (its position on the page is unknown: drawn below)'}
          .
        </p>
      )}
      {selector && el.data && !box && (
        <div class="stage stage-el">
          <Heat
            points={el.data.points.map((p) => ({ x: p.rx, y: p.ry }))}
            radius={12}
            label={`Element heatmap of ${selector}`}
          />
        </div>
      )}
    </section>
  );
}

function Compare({ site, page, pages }: { site: string; page: string; pages: string[] }) {
  const other = route.value.query.get('compare') ?? '';
  const c = useData(
    () =>
      other
        ? get<{
            a: { page: string; score: number; sessions: number; open_issues: number };
            b: { page: string; score: number; sessions: number; open_issues: number };
            higher_friction: string | null;
          }>('/v1/query/compare', { site_id: site, a: page, b: other })
        : Promise.resolve(null),
    [site, page, other],
  );
  return (
    <section class="card" aria-labelledby="cmp-h">
      <h2 id="cmp-h">Compare with another page</h2>
      <Field label="Other page">
        <select value={other} onChange={(e) => go('page', { site, page, compare: e.currentTarget.value })}>
          <option value="">choose a page</option>
          <Options values={pages.filter((p) => p !== page)} />
        </select>
      </Field>
      {c.data && (
        <Table caption="Comparison" head={['', c.data.a.page, c.data.b.page]}>
          <tr>
            <th scope="row">Score</th>
            <td>
              <ScoreBadge score={c.data.a.score} />
            </td>
            <td>
              <ScoreBadge score={c.data.b.score} />
            </td>
          </tr>
          <tr>
            <th scope="row">Sessions</th>
            <td>{c.data.a.sessions}</td>
            <td>{c.data.b.sessions}</td>
          </tr>
          <tr>
            <th scope="row">Open issues</th>
            <td>{c.data.a.open_issues}</td>
            <td>{c.data.b.open_issues}</td>
          </tr>
        </Table>
      )}
    </section>
  );
}

export function PageScreen({ site }: { site: string }) {
  const q = route.value.query;
  const scores = useData(() => get<Scores>('/v1/query/scores', { site_id: site }), [site]);
  const pages = scores.data?.pages.map((p) => p.page) ?? [];
  const page = q.get('page') ?? pages[0] ?? null;
  const selector = q.get('selector');
  const l = useData(
    () => (page ? get<PageData>('/v1/query/page', { site_id: site, page }) : Promise.resolve(null)),
    [site, page],
  );
  const hist = useData(
    () =>
      page
        ? get<{ history: ScorePoint[] }>('/v1/query/trends', { site_id: site, page, days: 30 })
        : Promise.resolve(null),
    [site, page],
  );
  if (scores.data && !page)
    return (
      <>
        <h1>Pages</h1>
        <p class="card empty">
          No page has been scored yet. Pages appear after the SDK reports visits (try <code>npm run demo</code>).
        </p>
      </>
    );
  return (
    <>
      <h1>Page {page ?? ''}</h1>
      <Field label="Page">
        <select value={page ?? ''} onChange={(e) => go('page', { site, page: e.currentTarget.value })}>
          <Options values={pages} />
        </select>
      </Field>
      <Show l={l} what="the page">
        {(d) =>
          d && (
            <>
              <section class="card" aria-labelledby="ps-h">
                <h2 id="ps-h">Score</h2>
                <p class="big">
                  <ScoreBadge score={d.score} /> <Trend trend={d.trend} />{' '}
                  {d.budget.limit !== null && (
                    <span class={d.budget.exceeded ? 'error' : 'muted'}>
                      budget {fmtScore(d.budget.limit)}
                      {d.budget.exceeded ? ' exceeded' : ''}
                    </span>
                  )}
                </p>
                {hist.data && (
                  <LineChart
                    label={`Confusion score of ${d.page}, 30 days`}
                    points={hist.data.history.map((p) => ({ t: Date.parse(p.date), v: p.score }))}
                    markers={d.deploys.map((x) => ({
                      t: Date.parse(x.recorded_at),
                      label: `${x.version} ${x.verdict}`,
                      kind: x.verdict.toLowerCase(),
                    }))}
                  />
                )}
              </section>
              <section class="card" aria-labelledby="el-h">
                <h2 id="el-h">Elements</h2>
                {d.elements.length === 0 ? (
                  <p class="muted">No element has friction signals.</p>
                ) : (
                  <Table caption="Elements by friction" head={['Element', 'Label', 'Signals', 'Friction', 'Heatmap']}>
                    {d.elements.map((e) => (
                      <tr key={e.selector}>
                        <td>
                          <code>{e.selector}</code>
                        </td>
                        <td>{e.label ?? '–'}</td>
                        <td>
                          {Object.entries(e.signals)
                            .map(([k, v]) => `${k.replace(/_/g, ' ')} ${v}`)
                            .join(', ')}
                        </td>
                        <td>{fmtScore(e.friction_score)}</td>
                        <td>
                          <a
                            href={href('page', { site, page: d.page, selector: e.selector })}
                            aria-current={selector === e.selector ? 'true' : undefined}
                          >
                            Show on page<span class="sr-only"> for {e.selector}</span>
                          </a>
                        </td>
                      </tr>
                    ))}
                  </Table>
                )}
              </section>
              <PageHeatmap site={site} page={d.page} selector={selector} />
              <Compare site={site} page={d.page} pages={pages} />
            </>
          )
        }
      </Show>
    </>
  );
}
