import { useState } from 'preact/hooks';
import { get } from '../api.ts';
import { href } from '../route.ts';
import { Show, Table, fmtDate, useData } from '../ui.tsx';

interface Edge {
  from: string;
  to: string;
  sessions: number;
  friction_weight: number;
  signals: Record<string, number>;
  examples: {
    session_id: string;
    page: string;
    signal_type: string;
    element_selector: string | null;
    occurred_at: string;
  }[];
}

/** Pages on a circle, edges as arrows whose width is their friction weight; hover or focus shows the examples. */
function Graph({ edges, site }: { edges: Edge[]; site: string }) {
  const [sel, setSel] = useState<number | null>(null);
  const pages = [...new Set(edges.flatMap((e) => [e.from, e.to]))];
  const W = 640;
  const H = 420;
  const R = Math.min(W, H) / 2 - 60;
  const pos = new Map(
    pages.map((p, i) => [
      p,
      {
        x: W / 2 + R * Math.cos((2 * Math.PI * i) / pages.length - Math.PI / 2),
        y: H / 2 + R * Math.sin((2 * Math.PI * i) / pages.length - Math.PI / 2),
      },
    ]),
  );
  const maxW = Math.max(...edges.map((e) => e.friction_weight), 1);
  const shown = sel === null ? null : edges[sel];
  return (
    <div class="graph">
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="group"
        aria-label={`Friction journeys: ${edges.length} edges between ${pages.length} pages`}
      >
        <defs>
          <marker
            id="arrow"
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="6"
            markerHeight="6"
            orient="auto-start-reverse"
          >
            <path d="M0,0L10,5L0,10z" class="arrowhead" />
          </marker>
        </defs>
        {edges.map((e, i) => {
          const a = pos.get(e.from)!;
          const b = pos.get(e.to)!;
          const w = 1 + (e.friction_weight / maxW) * 9;
          const d =
            e.from === e.to
              ? `M${a.x},${a.y} c-40,-60 40,-60 0,0`
              : `M${a.x},${a.y} Q${(a.x + b.x) / 2 + (b.y - a.y) * 0.15},${(a.y + b.y) / 2 - (b.x - a.x) * 0.15} ${b.x},${b.y}`;
          return (
            <path
              key={i}
              d={d}
              class={`edge ${sel === i ? 'edge-on' : ''}`}
              stroke-width={w}
              marker-end="url(#arrow)"
              tabIndex={0}
              role="button"
              aria-label={`${e.from} to ${e.to}: weight ${e.friction_weight}, ${e.sessions} sessions`}
              onMouseEnter={() => setSel(i)}
              onFocus={() => setSel(i)}
              onClick={() => setSel(i)}
              onKeyDown={(ev) => {
                if (ev.key === 'Enter' || ev.key === ' ') {
                  ev.preventDefault();
                  setSel(i);
                }
              }}
            />
          );
        })}
        {pages.map((p) => {
          const q = pos.get(p)!;
          return (
            <g key={p}>
              <circle cx={q.x} cy={q.y} r="7" class="node" />
              <text x={q.x} y={q.y - 12} text-anchor="middle" class="node-label">
                {p}
              </text>
            </g>
          );
        })}
      </svg>
      <div class="card examples" aria-live="polite">
        {shown ? (
          <>
            <h2 class="h3">
              {shown.from} → {shown.to}
            </h2>
            <p class="muted">
              weight {shown.friction_weight} · {shown.sessions} sessions ·{' '}
              {Object.entries(shown.signals)
                .map(([k, v]) => `${k.replace(/_/g, ' ')} ${v}`)
                .join(', ')}
            </p>
            <ul class="plain">
              {shown.examples.map((x) => (
                <li key={x.session_id + x.occurred_at}>
                  <a href={href(`session/${x.session_id}`, { site })}>
                    {x.signal_type.replace(/_/g, ' ')} on {x.element_selector ?? x.page}
                  </a>{' '}
                  <span class="muted">{fmtDate(x.occurred_at)}</span>
                </li>
              ))}
            </ul>
          </>
        ) : (
          <p class="muted">Hover or focus an edge to see up to 5 example sessions.</p>
        )}
      </div>
    </div>
  );
}

export function JourneysScreen({ site }: { site: string }) {
  const l = useData(() => get<{ edges: Edge[] }>('/v1/query/journeys/friction', { site_id: site }), [site]);
  return (
    <>
      <h1>Friction journeys</h1>
      <Show l={l} what="journeys">
        {(d) =>
          d.edges.length === 0 ? (
            <p class="card empty">
              No journey carries friction yet. Journeys appear when visitors hit friction while moving between pages.
            </p>
          ) : (
            <>
              <Graph edges={d.edges.slice(0, 40)} site={site} />
              <Table caption="Journey edges by friction weight" head={['From', 'To', 'Weight', 'Sessions']}>
                {d.edges.map((e, i) => (
                  <tr key={i}>
                    <td>{e.from}</td>
                    <td>{e.to}</td>
                    <td>{e.friction_weight}</td>
                    <td>{e.sessions}</td>
                  </tr>
                ))}
              </Table>
            </>
          )
        }
      </Show>
    </>
  );
}
