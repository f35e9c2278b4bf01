import { useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import type { z } from 'zod';
import type { AlertRuleListSchema } from '../../../routes/alert-rules/alert-rules.schema.ts';
import { get, patch, post } from '../api.ts';
import { href, route } from '../route.ts';
import { loadSession, me, sites } from '../state.ts';
import type { Delivery } from '../types.ts';
import {
  CopyButton,
  DeleteButton,
  DeliveryResult,
  ErrorNote,
  Field,
  Show,
  Table,
  fmtDate,
  useData,
  useSubmit,
  type Loaded,
} from '../ui.tsx';

const TABS: [string, string][] = [
  ['sites', 'Sites'],
  ['keys', 'Keys'],
  ['members', 'Members'],
  ['webhooks', 'Webhooks'],
  ['integrations', 'Integrations'],
  ['rules', 'Alert rules'],
  ['sdk', 'SDK config'],
  ['usage', 'Usage'],
];

/** A form whose submit runs `act`; shows the refusal, and resets nothing on failure. */
function ActForm({
  label,
  act,
  children,
}: {
  label: string;
  act: () => Promise<unknown>;
  children: ComponentChildren;
}) {
  const { busy, err, onSubmit } = useSubmit();
  return (
    <form class="inline" onSubmit={onSubmit(act)}>
      {children}
      <button type="submit" disabled={busy}>
        {label}
      </button>
      {err && <ErrorNote error={err} />}
    </form>
  );
}

/** What a row of a `ListAndAdd` list may do besides its own controls. */
interface RowActions {
  /** Says a row action's refusal under the list. */
  failed: (e: Error) => void;
  /** The row's last cell: the button that deletes it at `path` (asking `question` first), then reloads the list. */
  removeCell: (p: { path: string; label: string; name: string; question: string }) => ComponentChildren;
}

/**
 * A settings list and, under it, the form that adds to it. A row's action (revoke, delete, toggle) that the API refuses
 * is said under the list.
 */
function ListAndAdd<T>({
  l,
  what,
  list,
  heading,
  label,
  act,
  children,
}: {
  l: Loaded<T>;
  what: string;
  list: (d: T, row: RowActions) => ComponentChildren;
  heading: string;
  label: string;
  act: () => Promise<unknown>;
  children: ComponentChildren;
}) {
  const [err, setErr] = useState<Error | null>(null);
  const row: RowActions = {
    failed: setErr,
    removeCell: (p) => (
      <td>
        <DeleteButton {...p} done={l.reload} failed={setErr} />
      </td>
    ),
  };
  return (
    <>
      <Show l={l} what={what}>
        {(d) => list(d, row)}
      </Show>
      {err && <ErrorNote error={err} />}
      <h3>{heading}</h3>
      <ActForm label={label} act={act}>
        {children}
      </ActForm>
    </>
  );
}

/** A required number field: the browser holds it to [min, max] before the form is sent; the text is kept as typed. */
function RangeField({
  label,
  min,
  max,
  step,
  value,
  set,
}: {
  label: string;
  min: number;
  max: number;
  step?: number;
  value: string;
  set: (v: string) => void;
}) {
  return (
    <Field label={label}>
      <input
        type="number"
        min={min}
        max={max}
        step={step}
        required
        value={value}
        onInput={(e) => set(e.currentTarget.value)}
      />
    </Field>
  );
}

/** A secret the API shows once: with a copy button and a warning. */
function Secret({ what, value }: { what: string; value: string }) {
  return (
    <div class="card secret" role="status">
      <p>
        <strong>{what}</strong>: copy it now, it is not shown again.
      </p>
      <pre tabIndex={0}>
        <code data-testid="secret">{value}</code>
      </pre>
      <CopyButton text={value} />
    </div>
  );
}

function Sites() {
  const org = me.value!.org.id;
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [created, setCreated] = useState<{ publishable_key: string; secret_key: string } | null>(null);
  return (
    <>
      <Table caption="Sites" head={['Name', 'URL', 'Status']}>
        {sites.value.map((s) => (
          <tr key={s.id}>
            <td>
              <a href={href('overview', { site: s.id })}>{s.name}</a>
            </td>
            <td>{s.url}</td>
            <td>{s.status}</td>
          </tr>
        ))}
      </Table>
      <h3>Add a site</h3>
      <ActForm
        label="Create site"
        act={async () => {
          const r = await post<{ publishable_key: string; secret_key: string }>('/v1/manage/site', {
            org_id: org,
            name,
            url,
          });
          setCreated(r);
          await loadSession();
        }}
      >
        <Field label="Name">
          <input required maxLength={120} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field label="URL">
          <input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </Field>
      </ActForm>
      {created && (
        <>
          <Secret what="Publishable key (for the SDK tag)" value={created.publishable_key} />
          <Secret what="Secret key" value={created.secret_key} />
        </>
      )}
    </>
  );
}

interface Key {
  id: string;
  key_type: string;
  name: string | null;
  key_prefix: string;
  scopes: string[];
  created_at: string;
  revoked_at: string | null;
}
const KEY_SCOPES: Record<string, string[]> = {
  secret: ['query:read', 'manage:write', 'webhook:write'],
  mcp: ['mcp:read'],
  publishable: ['ingest:write'],
};

function Keys({ site }: { site: string }) {
  const l = useData(() => get<{ keys: Key[] }>('/v1/manage/keys', { site_id: site }), [site]);
  const [type, setType] = useState('secret');
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['query:read']);
  const [secret, setSecret] = useState<string | null>(null);
  return (
    <>
      <ListAndAdd
        l={l}
        what="keys"
        list={(d, { removeCell }) => (
          <Table caption="API keys" head={['Name', 'Type', 'Key', 'Scopes', 'Created', '']}>
            {d.keys.map((k) => (
              <tr key={k.id} data-testid="key-row">
                <td>{k.name ?? '–'}</td>
                <td>{k.key_type}</td>
                <td>
                  <code>{k.key_prefix}…</code>
                </td>
                <td>{k.scopes.join(', ')}</td>
                <td>{fmtDate(k.created_at)}</td>
                {k.revoked_at ? (
                  <td>revoked {fmtDate(k.revoked_at)}</td>
                ) : (
                  removeCell({
                    path: `/v1/manage/keys/${k.id}`,
                    label: 'Revoke',
                    name: k.name ?? k.key_prefix,
                    question: `Revoke ${k.name ?? k.key_prefix}? Anything using it stops working at once.`,
                  })
                )}
              </tr>
            ))}
          </Table>
        )}
        heading="Create a key"
        label="Create key"
        act={async () => {
          const k = await post<{ key: string }>('/v1/manage/keys', {
            site_id: site,
            key_type: type,
            scopes,
            name: name.trim() || undefined,
          });
          setSecret(k.key);
          l.reload();
        }}
      >
        <Field label="Name">
          <input value={name} maxLength={120} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field label="Type">
          <select
            value={type}
            onChange={(e) => {
              const t = e.currentTarget.value;
              setType(t);
              setScopes([KEY_SCOPES[t][0]]);
            }}
          >
            <option value="secret">secret (server-side)</option>
            <option value="mcp">MCP (AI assistants, read-only)</option>
            <option value="publishable">publishable (browser SDK)</option>
          </select>
        </Field>
        <fieldset>
          <legend>Scopes</legend>
          {KEY_SCOPES[type].map((s) => (
            <label key={s} class="check">
              <input
                type="checkbox"
                checked={scopes.includes(s)}
                onChange={(e) => setScopes(e.currentTarget.checked ? [...scopes, s] : scopes.filter((x) => x !== s))}
              />{' '}
              {s}
            </label>
          ))}
        </fieldset>
      </ListAndAdd>
      {secret && <Secret what="New key" value={secret} />}
    </>
  );
}

function Members() {
  const org = me.value!.org.id;
  const l = useData(
    () =>
      get<{
        members: { id: string; user_id: string; email: string; role: string; created_at: string }[];
        invitations: { id: string; email: string; role: string; expires_at: string }[];
      }>('/v1/manage/members', { org_id: org }),
    [org],
  );
  // Only an owner changes or removes members, and never themselves (the API enforces it; the page only hides what it would refuse).
  const owner = me.value!.role === 'owner';
  const self = me.value!.user.id;
  const [err, setErr] = useState<Error | null>(null);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('member');
  const [token, setToken] = useState<string | null>(null);
  return (
    <>
      <Show l={l} what="members">
        {(d) => (
          <>
            <Table caption="Members" head={['Email', 'Role', 'Since', '']}>
              {d.members.map((m) => (
                <tr key={m.id}>
                  <td>{m.email}</td>
                  <td>
                    {owner && m.user_id !== self ? (
                      <label>
                        <span class="sr-only">Role of {m.email}</span>
                        <select
                          value={m.role}
                          onChange={(e) =>
                            patch(`/v1/manage/members/${m.id}`, { role: e.currentTarget.value }).then(
                              l.reload,
                              (x: Error) => {
                                setErr(x);
                                l.reload();
                              },
                            )
                          }
                        >
                          {['owner', 'admin', 'member', 'viewer'].map((r) => (
                            <option key={r}>{r}</option>
                          ))}
                        </select>
                      </label>
                    ) : (
                      m.role
                    )}
                  </td>
                  <td>{fmtDate(m.created_at)}</td>
                  <td>
                    {owner && m.user_id !== self && (
                      <DeleteButton
                        path={`/v1/manage/members/${m.id}`}
                        label="Remove"
                        name={m.email}
                        question={`Remove ${m.email} from the organization?`}
                        done={l.reload}
                        failed={setErr}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </Table>
            {err && <ErrorNote error={err} />}
            {d.invitations.length > 0 && (
              <Table caption="Pending invitations" head={['Email', 'Role', 'Expires', '']}>
                {d.invitations.map((i) => (
                  <tr key={i.id}>
                    <td>{i.email}</td>
                    <td>{i.role}</td>
                    <td>{fmtDate(i.expires_at)}</td>
                    <td>
                      <DeleteButton
                        path={`/v1/manage/members/${i.id}`}
                        label="Cancel"
                        name={`invitation of ${i.email}`}
                        done={l.reload}
                      />
                    </td>
                  </tr>
                ))}
              </Table>
            )}
          </>
        )}
      </Show>
      <h3>Invite</h3>
      <ActForm
        label="Invite"
        act={async () => {
          const r = await post<{ invite_token: string | null; mailed: boolean }>('/v1/manage/members', {
            org_id: org,
            email,
            role,
          });
          setToken(r.invite_token);
          l.reload();
        }}
      >
        <Field label="Email">
          <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </Field>
        <Field label="Role">
          <select value={role} onChange={(e) => setRole(e.currentTarget.value)}>
            <option>admin</option>
            <option>member</option>
            <option>viewer</option>
          </select>
        </Field>
      </ActForm>
      {token && (
        <Secret
          what="Invitation link (no mail server configured: hand it over yourself)"
          value={`${location.origin}/${href('accept-invite', { token })}`}
        />
      )}
    </>
  );
}

interface Endpoint {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  active: boolean;
  consecutive_failures: number;
  disabled_reason: string | null;
}

function Webhooks() {
  const org = me.value!.org.id;
  const l = useData(async () => {
    const [w, log] = await Promise.all([
      get<{ endpoints: Endpoint[] }>('/v1/manage/webhooks', { org_id: org }),
      get<{ deliveries: Delivery[] }>('/v1/query/webhook-deliveries', { org_id: org, limit: 100 }),
    ]);
    return { endpoints: w.endpoints, deliveries: log.deliveries };
  }, [org]);
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const [note, setNote] = useState<string>('');
  return (
    <>
      <Show l={l} what="webhooks">
        {(d) => (
          <>
            {d.endpoints.length === 0 ? (
              <p class="muted">No webhook endpoint.</p>
            ) : (
              <ul class="plain">
                {d.endpoints.map((e) => (
                  <li key={e.id} class="card">
                    <p>
                      <code>{e.url}</code>{' '}
                      {e.active ? 'active' : `disabled${e.disabled_reason ? `: ${e.disabled_reason}` : ''}`} ·{' '}
                      {e.events.length ? e.events.join(', ') : 'all events'}
                      {e.consecutive_failures ? ` · ${e.consecutive_failures} failures in a row` : ''}
                    </p>
                    <div class="row">
                      <button
                        type="button"
                        class="secondary"
                        onClick={() =>
                          post<{ event_id: string }>(`/v1/manage/webhooks/${e.id}/test`).then(
                            (r) => {
                              setNote(`Test event ${r.event_id} queued.`);
                              setTimeout(l.reload, 1500);
                            },
                            (x: Error) => setNote(x.message),
                          )
                        }
                      >
                        Send test<span class="sr-only"> to {e.url}</span>
                      </button>
                      <button
                        type="button"
                        class="secondary"
                        onClick={() =>
                          patch(`/v1/manage/webhooks/${e.id}`, { active: !e.active }).then(l.reload, (x: Error) =>
                            setNote(x.message),
                          )
                        }
                      >
                        {e.active ? 'Disable' : 'Enable'}
                        <span class="sr-only"> {e.url}</span>
                      </button>
                    </div>
                    <details>
                      <summary>Delivery log</summary>
                      <Table caption={`Deliveries to ${e.url}`} head={['When', 'Event', 'Attempt', 'Result']}>
                        {d.deliveries
                          .filter((x) => x.endpoint_id === e.id)
                          .map((x) => (
                            <tr key={x.id}>
                              <td>{fmtDate(x.at)}</td>
                              <td>{x.event_type}</td>
                              <td>{x.attempt}</td>
                              <DeliveryResult d={x} />
                            </tr>
                          ))}
                      </Table>
                    </details>
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </Show>
      <p role="status" class="muted">
        {note}
      </p>
      <h3>Add an endpoint</h3>
      <ActForm
        label="Add endpoint"
        act={async () => {
          const r = await post<{ signing_secret: string }>('/v1/manage/webhooks', { org_id: org, url });
          setSecret(r.signing_secret);
          l.reload();
        }}
      >
        <Field label="URL">
          <input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </Field>
      </ActForm>
      {secret && <Secret what="Signing secret" value={secret} />}
    </>
  );
}

function Integrations({ site }: { site: string }) {
  const l = useData(
    () =>
      get<{
        integrations: {
          id: string;
          provider: string;
          config: Record<string, unknown>;
          secrets: string[];
          created_at: string;
        }[];
      }>('/v1/manage/integrations', { site_id: site }),
    [site],
  );
  const [provider, setProvider] = useState('slack');
  const [value, setValue] = useState('');
  const [channel, setChannel] = useState('');
  const config = (): Record<string, unknown> =>
    provider === 'slack'
      ? { webhook_url: value, ...(channel ? { channel } : {}) }
      : provider === 'pagerduty'
        ? { routing_key: value }
        : {};
  return (
    <>
      <p class="muted">
        Email alerts need no integration: they go to the organization's members through the server's SMTP settings.
      </p>
      <ListAndAdd
        l={l}
        what="integrations"
        list={(d) =>
          d.integrations.length === 0 ? (
            <p class="muted">No integration connected.</p>
          ) : (
            <Table caption="Integrations" head={['Provider', 'Settings', 'Stored secrets', '']}>
              {d.integrations.map((i) => (
                <tr key={i.id}>
                  <td>{i.provider}</td>
                  <td>{JSON.stringify(i.config)}</td>
                  <td>{i.secrets.join(', ')}</td>
                  <td>
                    <DeleteButton
                      path={`/v1/manage/integrations/${i.id}`}
                      label="Disconnect"
                      name={i.provider}
                      done={l.reload}
                    />
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
        heading="Connect"
        label="Connect"
        act={async () => {
          await post('/v1/manage/integrations', { site_id: site, provider, config: config() });
          setValue('');
          l.reload();
        }}
      >
        <Field label="Provider">
          <select value={provider} onChange={(e) => setProvider(e.currentTarget.value)}>
            <option value="slack">Slack</option>
            <option value="pagerduty">PagerDuty</option>
          </select>
        </Field>
        <Field label={provider === 'slack' ? 'Incoming webhook URL' : 'Routing key'}>
          <input required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        </Field>
        {provider === 'slack' && (
          <Field label="Channel (optional)">
            <input value={channel} onInput={(e) => setChannel(e.currentTarget.value)} />
          </Field>
        )}
      </ListAndAdd>
    </>
  );
}

const TRIGGERS = ['spike', 'anomaly', 'new_page', 'trend', 'co_occurrence', 'positive', 'budget'];

function Rules({ site }: { site: string }) {
  const l = useData(
    () => get<z.output<typeof AlertRuleListSchema>>('/v1/manage/alert-rules', { site_id: site }),
    [site],
  );
  const [name, setName] = useState('');
  const [trigger, setTrigger] = useState('spike');
  const [threshold, setThreshold] = useState('20');
  const [pattern, setPattern] = useState('');
  return (
    <ListAndAdd
      l={l}
      what="alert rules"
      list={(d, { failed, removeCell }) =>
        d.alert_rules.length === 0 ? (
          <p class="muted">No alert rule.</p>
        ) : (
          <Table caption="Alert rules" head={['Name', 'Trigger', 'Threshold', 'Pages', 'Channels', 'Enabled', '']}>
            {d.alert_rules.map((r) => (
              <tr key={r.id}>
                <td>{r.name}</td>
                <td>{r.trigger_type}</td>
                <td>{r.threshold}</td>
                <td>{r.page_pattern ?? 'all'}</td>
                <td>{r.channels.join(', ') || '–'}</td>
                <td>
                  <label class="check">
                    <input
                      type="checkbox"
                      checked={r.enabled}
                      onChange={(e) =>
                        patch(`/v1/manage/alert-rules/${r.id}`, { enabled: e.currentTarget.checked }).then(
                          l.reload,
                          failed,
                        )
                      }
                    />
                    <span class="sr-only">{r.name} enabled</span>
                  </label>
                </td>
                {removeCell({
                  path: `/v1/manage/alert-rules/${r.id}`,
                  label: 'Delete',
                  name: r.name,
                  question: `Delete the rule ${r.name}?`,
                })}
              </tr>
            ))}
          </Table>
        )
      }
      heading="Add a rule"
      label="Add rule"
      act={async () => {
        await post('/v1/manage/alert-rules', {
          site_id: site,
          name: name || undefined,
          trigger_type: trigger,
          threshold: Number(threshold),
          page_pattern: pattern || undefined,
        });
        l.reload();
      }}
    >
      <Field label="Name">
        <input value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <Field label="Trigger">
        <select value={trigger} onChange={(e) => setTrigger(e.currentTarget.value)}>
          {TRIGGERS.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </Field>
      <RangeField label="Threshold (0-1000)" min={0} max={1000} value={threshold} set={setThreshold} />
      <Field label="Page pattern (optional)">
        <input placeholder="/checkout*" value={pattern} onInput={(e) => setPattern(e.currentTarget.value)} />
      </Field>
    </ListAndAdd>
  );
}

interface EnvConfig {
  environment: string;
  config: { sample_rate: number; ignore_selectors: string[]; segment: { app_version: string | null } };
  updated_at: string;
}

function SdkConfig({ site }: { site: string }) {
  const l = useData(() => get<{ environments: EnvConfig[] }>('/v1/manage/sdk-config', { site_id: site }), [site]);
  return (
    <Show l={l} what="SDK config">
      {(d) => (
        <>
          {d.environments.map((e) => (
            <SdkEnv key={e.environment} site={site} env={e} onSaved={l.reload} />
          ))}
        </>
      )}
    </Show>
  );
}

function SdkEnv({ site, env, onSaved }: { site: string; env: EnvConfig; onSaved: () => void }) {
  const [rate, setRate] = useState(String(env.config.sample_rate));
  const [ignore, setIgnore] = useState(env.config.ignore_selectors.join('\n'));
  const [saved, setSaved] = useState('');
  return (
    <section class="card" aria-label={`${env.environment} SDK config`}>
      <h3>{env.environment}</h3>
      <ActForm
        label={`Save ${env.environment}`}
        act={async () => {
          await patch(`/v1/manage/sdk-config/${env.environment}?site_id=${encodeURIComponent(site)}`, {
            sample_rate: Number(rate),
            ignore_selectors: ignore
              .split('\n')
              .map((s) => s.trim())
              .filter(Boolean),
          });
          setSaved('Saved: browsers pick it up within a minute.');
          onSaved();
        }}
      >
        <RangeField label="Sample rate (0 to 1)" min={0} max={1} step={0.01} value={rate} set={setRate} />
        <Field label="Ignored selectors (one per line)">
          <textarea rows={3} value={ignore} onInput={(e) => setIgnore(e.currentTarget.value)} />
        </Field>
      </ActForm>
      <p role="status" class="muted">
        {saved || `Updated ${fmtDate(env.updated_at)}`}
      </p>
    </section>
  );
}

function Usage() {
  const org = me.value!.org.id;
  const l = useData(
    () =>
      get<{
        plan: string;
        trial_active: boolean;
        trial_ends_at: string | null;
        limits: { sites: number | null; sessions_per_month: number | null };
        usage: { sites: number; sessions_this_month: number; resets_at: string };
        sessions_exceeded: boolean;
      }>('/v1/manage/usage', { org_id: org }),
    [org],
  );
  return (
    <Show l={l} what="usage">
      {(u) => {
        const pct = u.limits.sessions_per_month
          ? Math.min(100, (u.usage.sessions_this_month / u.limits.sessions_per_month) * 100)
          : 0;
        return (
          <>
            <p>
              Plan <strong>{u.plan}</strong>
              {u.trial_active ? ` (trial until ${fmtDate(u.trial_ends_at)})` : ''}
            </p>
            <p>
              Sessions this month: <strong>{u.usage.sessions_this_month.toLocaleString()}</strong> of{' '}
              {u.limits.sessions_per_month?.toLocaleString() ?? 'unlimited'} (resets {fmtDate(u.usage.resets_at)})
              {u.sessions_exceeded ? ' — limit reached: new sessions are refused' : ''}
            </p>
            {u.limits.sessions_per_month && (
              <meter min={0} max={100} value={pct} aria-label="Share of the monthly session allowance used">
                {pct.toFixed(0)}%
              </meter>
            )}
            <p>
              Sites: <strong>{u.usage.sites}</strong> of {u.limits.sites ?? 'unlimited'}
            </p>
          </>
        );
      }}
    </Show>
  );
}

export function SettingsScreen({ site }: { site: string }) {
  const tab = route.value.query.get('tab') ?? 'sites';
  const needsSite = !['sites', 'members', 'webhooks', 'usage'].includes(tab);
  return (
    <>
      <h1>Settings</h1>
      <nav aria-label="Settings sections" class="tabs">
        <ul>
          {TABS.map(([k, label]) => (
            <li key={k}>
              <a href={href('settings', { site, tab: k })} aria-current={tab === k ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <section class="card" aria-label={TABS.find(([k]) => k === tab)?.[1] ?? 'Sites'}>
        {needsSite && !site ? (
          <p>Create a site first.</p>
        ) : tab === 'keys' ? (
          <Keys site={site} />
        ) : tab === 'members' ? (
          <Members />
        ) : tab === 'webhooks' ? (
          <Webhooks />
        ) : tab === 'integrations' ? (
          <Integrations site={site} />
        ) : tab === 'rules' ? (
          <Rules site={site} />
        ) : tab === 'sdk' ? (
          <SdkConfig site={site} />
        ) : tab === 'usage' ? (
          <Usage />
        ) : (
          <Sites />
        )}
      </section>
    </>
  );
}
