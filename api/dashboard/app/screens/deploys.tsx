import { get } from '../api.ts';
import { go, href, route } from '../route.ts';
import type { Deploy } from '../types.ts';
import { Show, fmtDate, fmtScore, useData } from '../ui.tsx';

export function DeploysScreen({ site }: { site: string }) {
  const env = route.value.query.get('environment') === 'staging' ? 'staging' : 'production';
  const l = useData(
    () => get<{ deploys: Deploy[] }>('/v1/query/deploys', { site_id: site, environment: env, limit: 50 }),
    [site, env],
  );
  return (
    <>
      <h1>Deploys</h1>
      <div class="row" role="group" aria-label="Environment">
        {(['production', 'staging'] as const).map((e) => (
          <button
            key={e}
            type="button"
            class={env === e ? '' : 'secondary'}
            aria-pressed={env === e}
            onClick={() => go('deploys', { site, environment: e })}
          >
            {e}
          </button>
        ))}
      </div>
      <Show l={l} what="deploys">
        {(d) =>
          d.deploys.length === 0 ? (
            <div class="card empty">
              <p>No {env} deploy recorded. Record one from CI after the new version serves traffic:</p>
              <pre tabIndex={0}>
                <code>npx friction deploy record --version v1.2.3 --environment {env}</code>
              </pre>
            </div>
          ) : (
            <ol class="timeline deploys">
              {d.deploys.map((x) => (
                <li key={x.id} class="card" data-testid="deploy">
                  <h2 class="h3">
                    <span class={`verdict verdict-${x.verdict.toLowerCase()}`}>{x.verdict}</span> {x.version}
                  </h2>
                  <p class="muted">
                    {fmtDate(x.recorded_at)}
                    {x.commit_sha ? ` · ${x.commit_sha.slice(0, 10)}` : ''}
                    {x.cohort ? ` · ${x.cohort.sessions} sessions compared (${x.cohort.kind.replace('_', ' ')})` : ''}
                  </p>
                  <p>
                    before {fmtScore(x.confusion_before)} → after {fmtScore(x.confusion_after)} · delta{' '}
                    {x.delta === null
                      ? 'pending (needs 5 minutes of traffic)'
                      : `${x.delta > 0 ? '+' : ''}${x.delta.toFixed(1)}`}
                  </p>
                  {x.verdict_reasons.length > 0 && (
                    <ul>
                      {x.verdict_reasons.map((r) => (
                        <li key={r}>{r}</li>
                      ))}
                    </ul>
                  )}
                  {x.related_issues.length > 0 && (
                    <details>
                      <summary>{x.related_issues.length} related issues</summary>
                      <ul class="plain">
                        {x.related_issues.map((r) => (
                          <li key={r.issue_id}>
                            <strong>{r.relation.replace('_', ' ')}</strong>:{' '}
                            <a href={href(`issue/${r.issue_id}`, { site })}>{r.title}</a>
                            {r.record?.look ? <span class="muted"> (look {r.record.look})</span> : null}
                          </li>
                        ))}
                      </ul>
                    </details>
                  )}
                </li>
              ))}
            </ol>
          )
        }
      </Show>
    </>
  );
}
