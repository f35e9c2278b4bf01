import { useState } from 'preact/hooks';
import { ApiError, get, patch } from '../api.ts';
import { me } from '../state.ts';
import type { Alert, Delivery } from '../types.ts';
import { DeliveryResult, ErrorNote, Field, Show, Table, fmtDate, fmtScore, useData } from '../ui.tsx';

/** Notifications about this alert: deliveries of alert events for its site from its firing on. */
function Deliveries({ alert, all }: { alert: Alert; all: Delivery[] }) {
  const rows = all.filter(
    (d) =>
      d.event_type.startsWith('alert.') &&
      (d.site_id === null || d.site_id === alert.site_id) &&
      d.at >= alert.triggered_at,
  );
  if (rows.length === 0)
    return <p class="muted">No notification was sent for it (no channel or webhook configured).</p>;
  return (
    <Table caption={`Deliveries for ${alert.rule_name}`} head={['When', 'Channel', 'Target', 'Event', 'Result']}>
      {rows.map((d) => (
        <tr key={d.id}>
          <td>{fmtDate(d.at)}</td>
          <td>{d.channel}</td>
          <td>{d.target}</td>
          <td>{d.event_type}</td>
          <DeliveryResult d={d} />
        </tr>
      ))}
    </Table>
  );
}

function AlertCard({ a, deliveries, onChange }: { a: Alert; deliveries: Delivery[]; onChange: (x: Alert) => void }) {
  const [err, setErr] = useState<Error | null>(null);
  const [reason, setReason] = useState('');
  const move = (status: Alert['status']) => {
    const before = a;
    onChange({ ...a, status });
    setErr(null);
    patch<Alert>(
      `/v1/manage/alerts/${a.id}`,
      status === 'resolved' && reason.trim() ? { status, resolved_reason: reason.trim() } : { status },
    ).then(
      (saved) => onChange({ ...a, ...saved }),
      (e: Error) => {
        onChange(before);
        setErr(e);
      },
    );
  };
  return (
    <li class="card" data-testid="alert">
      <h2 class="h3">
        {a.rule_name} <span class={`status status-${a.status}`}>{a.status}</span>
      </h2>
      <p class="muted">
        {a.trigger_type.replace('_', ' ')} on {a.page ?? 'the site'} · score {fmtScore(a.score_before)} →{' '}
        {fmtScore(a.score_after)} · fired {fmtDate(a.triggered_at)}
      </p>
      {a.status !== 'resolved' && (
        <div class="row">
          {a.status === 'fired' && (
            <button type="button" onClick={() => move('acknowledged')}>
              Acknowledge
            </button>
          )}
          {a.status !== 'investigating' && (
            <button type="button" class="secondary" onClick={() => move('investigating')}>
              Investigate
            </button>
          )}
          <Field label="Resolution note (optional)">
            <input value={reason} maxLength={500} onInput={(e) => setReason(e.currentTarget.value)} />
          </Field>
          <button type="button" class="secondary" onClick={() => move('resolved')}>
            Resolve
          </button>
        </div>
      )}
      {err && <ErrorNote error={new Error(`Not changed: ${err.message}`)} />}
      <details>
        <summary>Delivery log</summary>
        <Deliveries alert={a} all={deliveries} />
      </details>
    </li>
  );
}

export function AlertsScreen({ site }: { site: string }) {
  const org = me.value!.org.id;
  const l = useData(async () => {
    const [alerts, log] = await Promise.all([
      get<{ alerts: Alert[] }>('/v1/query/alerts', { site_id: site, limit: 50 }),
      // The delivery log is for roles that may see it; others get the alerts without it.
      get<{ deliveries: Delivery[] }>('/v1/query/webhook-deliveries', { org_id: org, limit: 200 }).catch(
        (e: unknown) => {
          if (e instanceof ApiError && e.status === 403) return { deliveries: [] };
          throw e;
        },
      ),
    ]);
    return { alerts: alerts.alerts, deliveries: log.deliveries };
  }, [site, org]);
  return (
    <>
      <h1>Alerts</h1>
      <Show l={l} what="alerts">
        {(d) =>
          d.alerts.length === 0 ? (
            <p class="card empty">
              No alert has fired. Alert rules (Settings → Alert rules) fire when a page's score spikes, drifts or breaks
              its budget.
            </p>
          ) : (
            <ol class="plain">
              {d.alerts.map((a) => (
                <AlertCard
                  key={a.id}
                  a={a}
                  deliveries={d.deliveries}
                  onChange={(x) => l.set({ ...d, alerts: d.alerts.map((y) => (y.id === x.id ? x : y)) })}
                />
              ))}
            </ol>
          )
        }
      </Show>
    </>
  );
}
