/**
 * Channel targets pinned to their provider by parsing, not by prefix: the stored URL's parts are each checked, and
 * the URL actually called is rebuilt from the configured origin and a path of plain segments only. A prefix check
 * (or `new URL(path, base)`) lets `https://hooks.slack.com//attacker.example/x` reach attacker.example: a path that
 * starts with `//` is a network-path reference.
 */

/** Slack incoming-webhook (`/services/…`) and workflow-trigger (`/triggers/…`, `/workflows/…`) paths: plain segments. */
const SLACK_PATH = /^\/(services|triggers|workflows)(\/[A-Za-z0-9_-]{1,128}){1,6}$/;

/**
 * The path of a Slack incoming-webhook URL, or null when the text is not exactly one: https, host hooks.slack.com,
 * no user info, no port, no query or fragment, no backslash, no encoded character, plain path segments.
 */
export function slackWebhookPath(raw: string): string | null {
  // Checked on the raw text too: URL parsing turns `\` into `/` and keeps `%2F` encoded, and neither belongs here.
  if (/[\\%\s]/.test(raw)) return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  if (
    u.protocol !== 'https:' ||
    u.hostname !== 'hooks.slack.com' ||
    u.port !== '' ||
    u.username !== '' ||
    u.password !== ''
  )
    return null;
  if (u.search !== '' || u.hash !== '' || raw.includes('?') || raw.includes('#')) return null;
  if (!raw.startsWith('https://hooks.slack.com/')) return null; // no `https:hooks.slack.com`, no `HTTPS://HOOKS…` variants
  return SLACK_PATH.test(u.pathname) ? u.pathname : null;
}

/** The URL a Slack incoming webhook is sent to: the configured origin (SLACK_WEBHOOK_BASE_URL) and the stored path. */
export function slackWebhookTarget(stored: string, baseUrl: string): string | null {
  const path = slackWebhookPath(stored);
  return path === null ? null : `${new URL(baseUrl).origin}${path}`;
}
