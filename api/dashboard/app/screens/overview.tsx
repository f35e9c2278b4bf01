import { get } from '../api.ts';
import { href } from '../route.ts';
import { me } from '../state.ts';
import type { Alert, Degradation, Deploy, Issue, Scores, ScorePoint } from '../types.ts';
import { GetStarted, LineChart, ScoreBadge, Show, Table, Trend, fmtDate, fmtScore, useData } from '../ui.tsx';

/**
 * Live updates: the overview and the issue stream re-read every 30 s while the tab is visible (docs/dashboard.md).
 * `localStorage['friction.pollMs']` (1000 or more) changes the period: the browser tests use it.
 */
export const POLL_MS = Math.max(1000, Number(localStorage.getItem('friction.pollMs')) || 30_000);

interface Overview {
  scores: Scores;
  history: ScorePoint[];
  deploys: Deploy[];
  issues: Issue[];
  alerts: Alert[];
  degraded: Degradation[];
}

async function loadOverview(site: string, org: string): Promise<Overview> {
  const [scores, trends, deploys, issues, alerts, degradation] = await Promise.all([
    get<Scores>('/v1/query/scores', { site_id: site }),
    get<{ history: ScorePoint[] }>('/v1/query/trends', { site_id: site, days: 30 }),
    get<{ deploys: Deploy[] }>('/v1/query/deploys', { site_id: site, limit: 50 }),
    get<{ issues: Issue[] }>('/v1/query/issues', { site_id: site, status: 'open', limit: 5 }),
    get<{ alerts: Alert[] }>('/v1/query/alerts', { site_id: site, status: 'fired', limit: 10 }),
    get<{ events: Degradation[] }>('/v1/query/degradation', { org_id: org, limit: 20 }),
  ]);
  return {
    scores,
    history: trends.history,
    deploys: deploys.deploys,
    issues: issues.issues,
    alerts: alerts.alerts,
    degraded: degradation.events.filter((e) => e.active),
  };
}

export function OverviewScreen({ site }: { site: string }) {
  const org = me.value!.org.id;
  const l = useData(() => loadOverview(site, org), [site, org], POLL_MS);
  return (
    <Show l={l} what="the overview">
      {(d) => {
        const empty = d.scores.pages.length === 0 && d.history.length === 0;
        const since = Date.now() - 30 * 86400_000;
        return (
          <>
            {d.degraded.map((e) => (
              <p key={e.id} class="banner" role="alert">
                <strong>Degraded: {e.kind.replace(/_/g, ' ')}</strong> {e.message} (since {fmtDate(e.started_at)})
              </p>
            ))}
            <h1>Overview</h1>
            {empty ? (
              <GetStarted siteId={site} />
            ) : (
              <>
                <section class="card hero" aria-labelledby="score-h" data-testid="overall-score">
                  {/* elementtiming: the browser records when this first painted (the overview's first meaningful paint). */}
                  <h2 id="score-h" {...{ elementtiming: 'overview-score' }}>
                    Site confusion score
                  </h2>
                  <p class="big">
                    <ScoreBadge score={d.scores.overall_score} /> <Trend trend={d.scores.overall_trend} />
                  </p>
                  <LineChart
                    label="Site confusion score, last 30 days"
                    points={d.history.map((p) => ({ t: Date.parse(p.date), v: p.score }))}
                    markers={d.deploys
                      .filter((x) => Date.parse(x.recorded_at) >= since)
                      .map((x) => ({
                        t: Date.parse(x.recorded_at),
                        label: `${x.version} ${x.verdict}`,
                        kind: x.verdict.toLowerCase(),
                      }))}
                  />
                </section>
                <div class="grid2">
                  <section class="card" aria-labelledby="pages-h">
                    <h2 id="pages-h">Pages by score</h2>
                    <Table caption="Pages by confusion score" head={['Page', 'Score', 'Trend', 'Top signal']}>
                      {d.scores.pages.map((p) => (
                        <tr key={p.page}>
                          <td>
                            <a href={href('page', { site, page: p.page })}>{p.page}</a>
                          </td>
                          <td>
                            <ScoreBadge score={p.score} />
                          </td>
                          <td>
                            <Trend trend={p.trend} />
                          </td>
                          <td>{p.dominant_signal?.replace(/_/g, ' ') ?? '–'}</td>
                        </tr>
                      ))}
                    </Table>
                  </section>
                  <section class="card" aria-labelledby="attn-h">
                    <h2 id="attn-h">Issues that need attention</h2>
                    {d.issues.length === 0 ? (
                      <p class="muted">No open issues.</p>
                    ) : (
                      <ul class="plain">
                        {d.issues.map((i) => (
                          <li key={i.id}>
                            <a href={href(`issue/${i.id}`, { site })}>{i.title}</a>{' '}
                            <span class="muted">
                              severity {fmtScore(i.severity)} · {i.affected_sessions} sessions
                            </span>
                          </li>
                        ))}
                      </ul>
                    )}
                    <p>
                      <a href={href('issues', { site })}>All issues</a>
                    </p>
                    <h2>Active alerts</h2>
                    {d.alerts.length === 0 ? (
                      <p class="muted">No alert is firing.</p>
                    ) : (
                      <ul class="plain">
                        {d.alerts.map((a) => (
                          <li key={a.id}>
                            <a href={href('alerts', { site })}>{a.rule_name}</a>{' '}
                            <span class="muted">
                              {a.page ?? ''} · {fmtScore(a.score_before)} → {fmtScore(a.score_after)} ·{' '}
                              {fmtDate(a.triggered_at)}
                            </span>
                          </li>
                        ))}
                      </ul>
                    )}
                  </section>
                </div>
              </>
            )}
          </>
        );
      }}
    </Show>
  );
}
