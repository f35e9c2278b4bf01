import type { AlertPayload } from '../../shared/notify/alert.ts';

/**
 * What an alert looks like on each channel. Pure: the same facts give the same message.
 * The facts are the event's `data.alert` (shared/notify/alert.ts), with the rule's Slack channel added at fan-out.
 */
export type AlertFacts = AlertPayload & { slack_channel?: string | null };

const VERB: Record<string, string> = {
  'alert.triggered': 'fired',
  'alert.acknowledged': 'acknowledged',
  'alert.resolved': 'resolved',
};

export function alertLink(a: AlertFacts, base: string | undefined): string | null {
  return base ? `${base.replace(/\/$/, '')}/v1/query/alerts/${a.id}?site_id=${a.site_id}` : null;
}

const score = (n: number | null) => (n === null ? '–' : String(Math.round(n * 10) / 10));

/** One line: what, where, how much. */
export function alertHeadline(kind: string, a: AlertFacts): string {
  const what = `${a.rule_name} (${a.trigger_type}) ${VERB[kind] ?? kind}`;
  return `${what} on ${a.page ?? 'the site'}: score ${score(a.score_before)} → ${score(a.score_after)}`;
}

/** Slack Block Kit message with a `text` fallback (notifications and clients without blocks show it). */
export function alertSlackMessage(
  kind: string,
  a: AlertFacts,
  base: string | undefined,
): { text: string; blocks: unknown[] } {
  const link = alertLink(a, base);
  const headline = alertHeadline(kind, a);
  const fields = [
    { type: 'mrkdwn', text: `*Page*\n${a.page ?? '—'}` },
    { type: 'mrkdwn', text: `*Trigger*\n${a.trigger_type}` },
    { type: 'mrkdwn', text: `*Score*\n${score(a.score_before)} → ${score(a.score_after)}` },
    { type: 'mrkdwn', text: `*Status*\n${a.status}` },
  ];
  const blocks: unknown[] = [
    {
      type: 'header',
      text: {
        type: 'plain_text',
        text: `${VERB[kind] === 'resolved' ? '✅' : VERB[kind] === 'acknowledged' ? '👀' : '🚨'} ${a.rule_name}`.slice(
          0,
          150,
        ),
      },
    },
    { type: 'section', text: { type: 'mrkdwn', text: (a.summary ?? headline).slice(0, 3000) }, fields },
  ];
  if (a.resolved_reason)
    blocks.push({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: `Resolved: ${a.resolved_reason.slice(0, 500)}` }],
    });
  if (link)
    blocks.push({
      type: 'actions',
      elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open alert' }, url: link }],
    });
  return { text: link ? `${headline} <${link}|open>` : headline, blocks };
}

/**
 * PagerDuty Events API v2 (without routing_key, added at send time): one incident per alert (`dedup_key`),
 * fired → trigger, acknowledged → acknowledge, resolved → resolve.
 */
export function pagerDutyEvent(
  kind: string,
  a: AlertFacts,
  severity: 'critical' | 'error' | 'warning' | 'info',
  base: string | undefined,
): Record<string, unknown> {
  const action = kind === 'alert.resolved' ? 'resolve' : kind === 'alert.acknowledged' ? 'acknowledge' : 'trigger';
  const dedup_key = `friction-alert-${a.id}`;
  if (action !== 'trigger') return { event_action: action, dedup_key };
  const link = alertLink(a, base);
  return {
    event_action: 'trigger',
    dedup_key,
    payload: {
      summary: alertHeadline(kind, a).slice(0, 1024),
      source: a.page ?? a.site_id,
      severity,
      timestamp: a.triggered_at,
      component: a.page ?? undefined,
      group: a.site_id,
      class: a.trigger_type,
      custom_details: {
        rule: a.rule_name,
        score_before: a.score_before,
        score_after: a.score_after,
        summary: a.summary,
      },
    },
    ...(link ? { links: [{ href: link, text: 'Open alert' }] } : {}),
  };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function alertEmail(
  kind: string,
  a: AlertFacts,
  base: string | undefined,
): { subject: string; text: string; html: string } {
  const headline = alertHeadline(kind, a);
  const link = alertLink(a, base);
  const lines = [
    headline,
    '',
    a.summary ?? '',
    `Rule: ${a.rule_name}`,
    `Page: ${a.page ?? '—'}`,
    `Status: ${a.status}`,
    ...(a.resolved_reason ? [`Resolved: ${a.resolved_reason}`] : []),
    ...(link ? ['', link] : []),
  ];
  const html = `<p><strong>${escapeHtml(headline)}</strong></p>${a.summary ? `<p>${escapeHtml(a.summary)}</p>` : ''}<ul><li>Rule: ${escapeHtml(a.rule_name)}</li><li>Page: ${escapeHtml(a.page ?? '—')}</li><li>Status: ${escapeHtml(a.status)}</li></ul>${link ? `<p><a href="${escapeHtml(link)}">Open alert</a></p>` : ''}`;
  return { subject: `[Friction] ${headline}`.slice(0, 200), text: lines.join('\n'), html };
}
