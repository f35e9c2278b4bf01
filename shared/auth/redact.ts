/**
 * Secrets never travel where they would be stored or shown in the clear: URLs given to Friction carry no
 * credentials (refused at the edge), and whatever goes into the audit log passes through `redactSecrets` first.
 */

/** Query parameters whose values are credentials by name (the usual spellings of tokens, keys and signatures). */
const SECRET_PARAM =
  /^(access_?token|token|auth|authorization|api_?key|apikey|key|secret|client_secret|password|passwd|pwd|pass|sig|signature|session|code)$/i;

/**
 * Why `url` carries a credential, or null: user:password before the host, or a query parameter named like a token.
 * Webhook endpoints authenticate Friction by its signature (the signing secret), not by a secret in the URL.
 */
export function urlCredentialProblem(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null; // not a URL: the URL schema says so
  }
  if (u.username || u.password)
    return 'must not carry credentials (user:password@): they would be stored and shown in the clear';
  for (const name of u.searchParams.keys()) {
    if (SECRET_PARAM.test(name))
      return `must not carry a credential in its query (${name}=): verify deliveries by their signature instead`;
  }
  return null;
}

/** Keys whose string values are secrets: `secret`, `password`, `token`, `api_key` and `*_secret`, `*_token`, … */
const SECRET_KEY =
  /^(.*[_-])?(secret|password|passwd|token|api_?key|authorization|credentials?|routing_key|integration_key)$/i;
/** Values that are credentials whatever their key: Friction's keys and tokens, signing secrets, Slack tokens, JWTs. */
const SECRET_VALUE =
  /\b(svc_(?:sec|mcp|pub)_[A-Za-z0-9_-]+|inv_[A-Za-z0-9_-]{16,}|whsec_[A-Za-z0-9+/=_-]+|xox[abposr]-[A-Za-z0-9-]+|eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)/g;
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/?#@\s]*@/gi;

export const REDACTED = '[redacted]';

function redactString(s: string): string {
  let out = s.replace(URL_USERINFO, `$1${REDACTED}@`).replace(SECRET_VALUE, REDACTED);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(out)) {
    try {
      const u = new URL(out);
      let changed = false;
      for (const name of [...u.searchParams.keys()]) {
        if (SECRET_PARAM.test(name)) {
          u.searchParams.set(name, REDACTED);
          changed = true;
        }
      }
      if (changed) out = u.toString();
    } catch {
      /* not a parseable URL: the patterns above did what they could */
    }
  }
  return out;
}

/**
 * A deep copy of `value` with every secret replaced by `[redacted]`: string values under secret-named keys, URL
 * credentials (user:password@, token-named query parameters), and values shaped like known credentials.
 * Booleans and numbers stay (`own_secret: true` says a secret was given, not what it is).
 */
export function redactSecrets<T>(value: T, depth = 0): T {
  if (depth > 20) return REDACTED as T;
  if (typeof value === 'string') return redactString(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1)) as T;
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      out[k] = SECRET_KEY.test(k) && typeof v === 'string' ? REDACTED : redactSecrets(v, depth + 1);
    return out as T;
  }
  return value;
}
