import type { KeyObject } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { InstanceKeys } from '../../shared/auth/instance-keys.ts';
import { unseal } from '../../shared/auth/secret-box.ts';
import type { Database } from '../../shared/db/database.ts';
import type { ClaimedDelivery } from '../store/deliveries.store.ts';
import type { Mailer } from '../../shared/mail/mailer.ts';
import { signedHeaders, signingKey, type WebhookEvent } from '../../shared/notify/webhook-event.ts';
import {
  DEFAULT_OUTBOUND_TIMEOUT_MS,
  OutboundError,
  outboundRequest,
  type OutboundPolicy,
} from '../../shared/net/outbound.ts';
import { alertEmail, alertSlackMessage, pagerDutyEvent, type AlertFacts } from './alert-messages.ts';
import { isSuccess, parseRetryAfter, type AttemptOutcome, type LoggedAs } from './retry-policy.ts';
import { classifyAddress } from '../../shared/net/address-class.ts';
import { slackWebhookTarget } from '../../shared/net/provider-urls.ts';

/** Where the providers live; tests (and proxies) point them at local servers. */
export interface ChannelSettings {
  outbound: OutboundPolicy;
  /** Slack incoming webhooks are sent to this origin instead of https://hooks.slack.com (same path). */
  slackWebhookBaseUrl: string;
  /** Slack Web API base for bot tokens (chat.postMessage). */
  slackApiBaseUrl: string;
  /** PagerDuty Events API v2 enqueue URL. */
  pagerDutyEventsUrl: string;
  /** Base of links in messages (the alert's URL). */
  publicBaseUrl: string | undefined;
  /** Null when SMTP_URL is unset: email deliveries are then abandoned with that reason, visibly, in the delivery log. */
  mailer: Mailer | null;
  instanceKeys: InstanceKeys;
}

export interface BuildContext {
  event: WebhookEvent;
  orgId: string;
  notification: Record<string, unknown>;
}
export interface BuiltDelivery {
  endpointId: string | null;
  /** Shown in the delivery log: never a secret. */
  target: string;
  body: string;
}
type Builder = (trx: Transaction<Database>, c: BuildContext) => Promise<BuiltDelivery[]>;
export type ChannelMessages = Record<'slack' | 'pagerduty' | 'email', Builder>;

/** Why a webhook delivery was given up unsent. */
export const ENDPOINT_GONE = 'endpoint disabled or removed before delivery';

export type SendResult = { kind: 'attempt'; outcome: AttemptOutcome } | { kind: 'abandon'; reason: string };

function alertOf(c: BuildContext): AlertFacts | null {
  const a = c.notification.alert as AlertFacts | undefined;
  return a && typeof a.id === 'string' ? a : null;
}

async function integrationOf(db: Kysely<Database> | Transaction<Database>, siteId: string, provider: string) {
  return db
    .selectFrom('integrations')
    .selectAll()
    .where('site_id', '=', siteId)
    .where('provider', '=', provider)
    .executeTakeFirst();
}

/** Message builders: run at fan-out, in its transaction. Bodies never hold a credential (added at send time). */
export function channelBuilders(s: Pick<ChannelSettings, 'publicBaseUrl'>): ChannelMessages {
  return {
    async slack(trx, c) {
      const alert = alertOf(c);
      if (!alert || !c.event.site_id) return [];
      const integ = await integrationOf(trx, c.event.site_id, 'slack');
      if (!integ) return [];
      const channel = (alert.slack_channel ?? (integ.config as { channel?: string }).channel ?? null) as string | null;
      const msg = alertSlackMessage(c.event.type, alert, s.publicBaseUrl);
      return [
        {
          endpointId: integ.id,
          target: `slack${channel ? ` ${channel}` : ''}`,
          body: JSON.stringify(channel ? { channel, ...msg } : msg),
        },
      ];
    },
    async pagerduty(trx, c) {
      const alert = alertOf(c);
      if (!alert || !c.event.site_id) return [];
      const integ = await integrationOf(trx, c.event.site_id, 'pagerduty');
      if (!integ) return [];
      const severity = ((integ.config as { severity?: string }).severity ?? 'error') as 'error';
      return [
        {
          endpointId: integ.id,
          target: 'pagerduty',
          body: JSON.stringify(pagerDutyEvent(c.event.type, alert, severity, s.publicBaseUrl)),
        },
      ];
    },
    async email(trx, c) {
      const alert = alertOf(c);
      if (!alert) return [];
      const to = await trx
        .selectFrom('memberships')
        .innerJoin('users', 'users.id', 'memberships.user_id')
        .select('users.email')
        .where('memberships.org_id', '=', c.orgId)
        .where('memberships.role', 'in', ['owner', 'admin'])
        .orderBy('users.email')
        .execute();
      if (to.length === 0) return [];
      return [
        {
          endpointId: null,
          target: to.map((r) => r.email).join(', '),
          body: JSON.stringify(alertEmail(c.event.type, alert, s.publicBaseUrl)),
        },
      ];
    },
  };
}

async function httpAttempt(
  url: string,
  headers: Record<string, string>,
  body: string,
  s: ChannelSettings,
  judge?: (status: number, text: string) => string | null,
): Promise<AttemptOutcome> {
  try {
    const res = await outboundRequest({ url, headers, body, timeoutMs: DEFAULT_OUTBOUND_TIMEOUT_MS }, s.outbound);
    const text = res.body.toString('utf8');
    const bad = isSuccess(res.status)
      ? (judge?.(res.status, text) ?? null)
      : `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
    const logged = privateTargetLog(res.address, res.status, bad !== null);
    if (!bad) return { ok: true, status: res.status, ...logged };
    return {
      ok: false,
      status: res.status,
      error: bad,
      retryAfterMs: parseRetryAfter(res.headers['retry-after'], Date.now()),
      ...logged,
    };
  } catch (err) {
    const error = err instanceof OutboundError ? `${err.kind}: ${err.message}` : (err as Error).message;
    return {
      ok: false,
      status: null,
      error,
      ...(err instanceof OutboundError && err.address ? privateTargetLog(err.address, null, true) : {}),
    };
  }
}

/** Fixed reason logged for a failed call to a private-network target (the real one stays in the dispatcher's log). */
export const PRIVATE_TARGET_FAILED = 'failed (private-network target: details withheld)';

/**
 * A target on loopback or a private network (reachable only with OUTBOUND_ALLOW_PRIVATE_NETWORKS) is logged for
 * the tenant as its status class and a fixed reason: its error text, and whether it answered at all (an open or
 * closed port), would otherwise let a tenant admin probe the operator's internal services.
 */
function privateTargetLog(address: string, status: number | null, failed: boolean): { logged?: LoggedAs } {
  if (classifyAddress(address) === 'public') return {};
  return {
    logged: {
      status: status === null ? null : Math.floor(status / 100) * 100,
      error: failed ? PRIVATE_TARGET_FAILED : null,
    },
  };
}

/**
 * Unsealed secrets by their sealed value, for one dispatcher. Deriving the key and opening the AES-GCM box on
 * every send costs more than the signature itself; a secret that is rotated gets a new sealed value (a fresh IV),
 * so an entry never goes stale. Bounded: cleared when full.
 */
export class SecretCache {
  private static readonly MAX = 10_000;
  private readonly keys: InstanceKeys;
  private readonly opened = new Map<string, string>();
  /** Webhook signing keys by sealed secret (made once: see signingKey). */
  private readonly signing = new Map<string, KeyObject>();

  constructor(keys: InstanceKeys) {
    this.keys = keys;
  }

  async open(sealed: string): Promise<string> {
    const hit = this.opened.get(sealed);
    if (hit !== undefined) return hit;
    const plain = unseal(await this.keys.sealKey(), sealed);
    if (this.opened.size >= SecretCache.MAX) this.opened.clear();
    this.opened.set(sealed, plain);
    return plain;
  }

  /** The HMAC key of a sealed webhook signing secret. */
  async signingKey(sealed: string): Promise<KeyObject> {
    const hit = this.signing.get(sealed);
    if (hit !== undefined) return hit;
    const key = signingKey(await this.open(sealed));
    if (this.signing.size >= SecretCache.MAX) this.signing.clear();
    this.signing.set(sealed, key);
    return key;
  }
}

async function unsealedSecrets(secrets: SecretCache, sealed: string): Promise<Record<string, string>> {
  return JSON.parse(await secrets.open(sealed)) as Record<string, string>;
}

/**
 * Sends one attempt of a claimed delivery on its channel (a webhook's endpoint came with the claim). Never throws
 * for the receiver's faults: they are outcomes.
 */
export async function sendDelivery(
  db: Kysely<Database>,
  d: ClaimedDelivery,
  s: ChannelSettings,
  secrets: SecretCache,
  nowSec: number,
): Promise<SendResult> {
  switch (d.channel) {
    case 'webhook': {
      const ep = d.endpoint;
      if (!ep || ep.deleted_at || !ep.active) return { kind: 'abandon', reason: ENDPOINT_GONE };
      const key = await secrets.signingKey(ep.secret_sealed);
      return {
        kind: 'attempt',
        outcome: await httpAttempt(ep.url, signedHeaders(key, d.event_id, nowSec, d.body), d.body, s),
      };
    }
    case 'slack': {
      const integ = await db.selectFrom('integrations').selectAll().where('id', '=', d.endpoint_id!).executeTakeFirst();
      if (!integ) return { kind: 'abandon', reason: 'Slack integration disconnected before delivery' };
      const creds = await unsealedSecrets(secrets, integ.secrets_sealed);
      if (creds.webhook_url) {
        // Rebuilt from the configured origin and a checked path: never `new URL(path, base)` (a `//host` path wins).
        const target = slackWebhookTarget(creds.webhook_url, s.slackWebhookBaseUrl);
        if (target === null)
          return {
            kind: 'attempt',
            outcome: {
              ok: false,
              status: null,
              error:
                'the stored Slack webhook_url is not an https://hooks.slack.com/services/… URL; reconnect the integration',
            },
          };
        return {
          kind: 'attempt',
          outcome: await httpAttempt(target, { 'content-type': 'application/json' }, d.body, s, (_st, text) =>
            text.trim() === 'ok' || text.trim() === '' ? null : `Slack answered: ${text.slice(0, 200)}`,
          ),
        };
      }
      const url = `${s.slackApiBaseUrl.replace(/\/$/, '')}/chat.postMessage`;
      const headers = { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${creds.bot_token}` };
      // The Web API answers 200 with { ok: false, error } on failure.
      return {
        kind: 'attempt',
        outcome: await httpAttempt(url, headers, d.body, s, (_st, text) =>
          /"ok"\s*:\s*true/.test(text) ? null : `Slack answered: ${text.slice(0, 200)}`,
        ),
      };
    }
    case 'pagerduty': {
      const integ = await db.selectFrom('integrations').selectAll().where('id', '=', d.endpoint_id!).executeTakeFirst();
      if (!integ) return { kind: 'abandon', reason: 'PagerDuty integration disconnected before delivery' };
      const { routing_key } = await unsealedSecrets(secrets, integ.secrets_sealed);
      const body = JSON.stringify({ routing_key, ...(JSON.parse(d.body) as object) });
      return {
        kind: 'attempt',
        outcome: await httpAttempt(s.pagerDutyEventsUrl, { 'content-type': 'application/json' }, body, s),
      };
    }
    case 'email': {
      // Retrying cannot help until the dispatcher restarts with SMTP_URL: given up at once, visibly, in the delivery log.
      if (!s.mailer)
        return { kind: 'abandon', reason: 'SMTP_URL is not set on the dispatcher: email alerts cannot be sent' };
      const m = JSON.parse(d.body) as { subject: string; text: string; html: string };
      try {
        await s.mailer.send({ to: d.target.split(', '), subject: m.subject, text: m.text, html: m.html });
        return { kind: 'attempt', outcome: { ok: true, status: 250 } };
      } catch (err) {
        return { kind: 'attempt', outcome: { ok: false, status: null, error: `smtp: ${(err as Error).message}` } };
      }
    }
    default:
      return { kind: 'abandon', reason: `unknown channel ${d.channel}` };
  }
}
