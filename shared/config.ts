import { isIP } from 'node:net';
import { z } from 'zod';

/** INGEST_LATENCY_TARGET_MS when unset, for an ingest process of its own. */
export const DEFAULT_INGEST_LATENCY_TARGET_MS = 50;

/** Empty strings in the environment mean "unset", so `DATABASE_URL=` selects the embedded default. */
const optionalUrl = z.preprocess((v) => (v === '' ? undefined : v), z.string().url().optional());
const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(min).max(max).default(def));

/** `true`/`1`/`yes` or `false`/`0`/`no` (any case); anything else is refused rather than read as false. */
const bool = (def: boolean) =>
  z
    .preprocess(
      (v) => (v === '' || v === undefined ? undefined : String(v).toLowerCase()),
      z.enum(['true', 'false', '1', '0', 'yes', 'no']).optional(),
    )
    .transform((v) => (v === undefined ? def : v === 'true' || v === '1' || v === 'yes'));

/**
 * Most stream messages (SDK batches) per processor transaction. A fetch holds whatever has arrived, so this bounds
 * only a backlog's fetches; there the derived rows (a session, page score and element row each, per fetch) are
 * written once per fetch, and 3,000 instead of 1,000 cut the processor's CPU per event by about a quarter on the
 * SDK-shaped backlog (docs/benchmarks.md). The cost is a longer transaction per fetch while behind.
 */
export const PROCESSOR_BATCH_MESSAGES_DEFAULT = 3000;

/**
 * How far V8 lets the processor's old generation grow past what survived its last full collection before it
 * collects again, in percent (V8's `--heap-growing-percent`; 0 leaves V8's own factor). V8 sizes that factor for
 * heaps of short-lived objects on a machine with memory to spare (up to 4x on a 24 GiB machine): the processor's
 * heap is mostly its long-lived engine state, so V8's factor held 2.5-3.6x that state resident (919-1,089 MiB RSS
 * for 301 MiB live at 100k pages and 1M clusters), and 50 % holds 1.5x (677 MiB) for about a tenth more CPU while
 * the state is built (docs/benchmarks.md, "Processor memory"). Not a cap: the heap grows as far as the state needs.
 */
export const PROCESSOR_HEAP_GROWTH_PERCENT_DEFAULT = 50;

/**
 * Every setting Friction reads, validated once at startup. Names are the environment variables.
 * Unset DATABASE_URL / NATS_URL / REDIS_URL select the embedded single-process defaults.
 */
export const EnvSchema = z.object({
  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  HOST: z.string().default('0.0.0.0'),
  PORT: int(8080, 0, 65535),
  PUBLIC_BASE_URL: optionalUrl,
  DATABASE_URL: optionalUrl,
  NATS_URL: optionalUrl,
  REDIS_URL: optionalUrl,
  /**
   * `server` insists on DATABASE_URL, NATS_URL and REDIS_URL (as setting DATABASE_URL or NATS_URL does) instead of
   * falling back to an embedded part; `auto` decides from the URLs. See shared/deployment-mode.ts.
   */
  FRICTION_MODE: z.enum(['auto', 'server']).default('auto'),
  /** How long a PostgreSQL pool checkout may wait for a connection before the caller sees an outage. */
  DATABASE_CONNECT_TIMEOUT_MS: int(10_000, 100, 600_000),
  /** Server-side statement_timeout on every PostgreSQL connection (0 disables). */
  DATABASE_STATEMENT_TIMEOUT_MS: int(60_000, 0, 3_600_000),
  /**
   * The processor's transactions run named (prepared) statements: PostgreSQL parses and analyses each once per
   * connection. `false` for a PgBouncer in transaction pooling mode older than 1.21, which cannot carry them.
   */
  DATABASE_PREPARED_STATEMENTS: bool(true),
  /**
   * Longest run of one Explore query (`/v1/query/explore`); beyond it the answer is a 503. PostgreSQL cancels the
   * statement (SET LOCAL statement_timeout); the embedded database cannot, so there the API stops waiting.
   */
  EXPLORE_STATEMENT_TIMEOUT_MS: int(10_000, 1, 600_000),
  FRICTION_DATA_DIR: z.string().default('./.friction'),
  /**
   * Number of event partitions (subjects events.v1.<p>.<site>). Fixed for the life of a stream: 16 lets up to 16
   * processors share the work through leases (docs/scale.md says how to change it).
   */
  EVENT_PARTITIONS: int(16, 1, 256),
  /**
   * Partitions this processor owns: `auto` (with NATS: a fair share taken through leases, rebalanced as processors
   * come and go; embedded: all, in its single process), `all`, or a static list like "0,2" or a range "0-3".
   */
  PROCESSOR_PARTITIONS: z.string().default('auto'),
  /**
   * How long a processor's partition lease lives without a renewal (renewed every quarter of it). A dead processor's
   * partitions are taken over within about twice this plus their rebuild.
   */
  PROCESSOR_LEASE_TTL_MS: int(10_000, 1000, 600_000),
  /** Copies a NATS cluster keeps of each stream and of the lease bucket (1, or 3 on a three-node cluster). */
  NATS_STREAM_REPLICAS: int(1, 1, 5),
  /** Prefix for stream, subject and consumer names: lets tests and tenants share one NATS. */
  STREAM_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_]*$/)
    .default(''),
  PROCESSOR_BATCH_MESSAGES: int(PROCESSOR_BATCH_MESSAGES_DEFAULT, 1, 10_000),
  PROCESSOR_FETCH_EXPIRES_MS: int(1000, 100, 60_000),
  /**
   * What arrives within this long of a batch's first message shares its transaction. At a steady rate a transaction's
   * cost is mostly per distinct page and cluster it touches, so gathering longer costs less per event: at 5,000
   * events/s, 200 ms against a 5 ms linger cut PostgreSQL's CPU per event by half and the processor's by a third
   * (docs/benchmarks.md), for that much more latency before scores and issues change. A backlog's batches fill at
   * once.
   */
  PROCESSOR_BATCH_WINDOW_MS: int(200, 0, 5000),
  /** Unacked messages are redelivered after this long: the pause before a crashed processor's batch is retried. */
  PROCESSOR_ACK_WAIT_MS: int(30_000, 1000, 600_000),
  PROCESSOR_HEAP_GROWTH_PERCENT: int(PROCESSOR_HEAP_GROWTH_PERCENT_DEFAULT, 0, 400),
  /**
   * A partition whose processor has more stream messages than this not yet committed is recorded as degraded
   * (`processor_lag`), as is one whose oldest uncommitted message is older than PROCESSOR_LAG_DEGRADED_SECONDS.
   */
  PROCESSOR_LAG_DEGRADED_MESSAGES: int(50_000, 1),
  PROCESSOR_LAG_DEGRADED_SECONDS: int(60, 1),
  /** UTC hour from which the nightly issue triage runs (once per site and day). */
  TRIAGE_HOUR_UTC: int(3, 0, 23),
  INGEST_RATE_LIMIT_PER_MIN: int(10_000, 1),
  INGEST_BODY_LIMIT_BYTES: int(1024 * 1024, 1024),
  /**
   * Ingest requests one process serves at once at most; past it, 503 with Retry-After before the body is read. The
   * ceiling of the adaptive limit (INGEST_LATENCY_TARGET_MS), and the limit itself when that is 0.
   */
  INGEST_MAX_INFLIGHT: int(256, 1),
  /**
   * Latency (ms, admission to answer, 90th percentile per 100 ms) ingest keeps its admitted requests under by lowering
   * how many it serves at once and refusing the rest with 503 and Retry-After (load shedding: ingest/admission.ts);
   * 0: a fixed limit of INGEST_MAX_INFLIGHT. Unset: DEFAULT_INGEST_LATENCY_TARGET_MS for an ingest process of its
   * own, 0 where ingest shares its process with the processor (see ingestRole).
   */
  INGEST_LATENCY_TARGET_MS: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(0).optional()),
  KEY_CACHE_TTL_MS: int(30_000, 0),
  /** How long ingest trusts a cached SDK config (changes are also broadcast to every replica). */
  SDK_CONFIG_CACHE_TTL_MS: int(30_000, 0),
  /** Cache-Control max-age of GET /v1/sdk-config: how long a browser may reuse a config before revalidating. */
  SDK_CONFIG_MAX_AGE_S: int(60, 0, 86_400),
  SHUTDOWN_TIMEOUT_MS: int(30_000, 100),
  /** How long `friction migrate` retries its database connection before it gives up (containers start in any order). */
  MIGRATE_CONNECT_TIMEOUT_MS: int(30_000, 0),
  /** Instance secret (user tokens, sealed webhook/integration secrets). Unset: generated once into FRICTION_DATA_DIR/instance-secret (mode 0600). */
  FRICTION_SECRET: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(32).optional()),
  /** Lifetime of a user token; renewed with POST /v1/auth/refresh while its session lives. */
  JWT_TTL_SECONDS: int(15 * 60, 60, 24 * 3600),
  /** Longest life of a session (a login): renewal stops after this, and the user logs in again. */
  SESSION_MAX_SECONDS: int(7 * 24 * 3600, 300, 90 * 24 * 3600),
  /**
   * Proxies whose X-Forwarded-For is believed (comma-separated IPs or CIDRs). Empty: the header is ignored and
   * the client address is the TCP peer, so nobody can choose the address the per-IP limits count against.
   */
  TRUSTED_PROXIES: z.preprocess(
    (v) => (v === undefined ? '' : v),
    z.string().refine(validProxyList, 'must be comma-separated IP addresses or CIDR ranges'),
  ),
  /** A connection must complete its request headers within this of its accept (or of its previous request): idle and slow-header sockets are closed. */
  HTTP_HEADERS_TIMEOUT_MS: int(60_000, 1000, 600_000),
  /** A whole request (headers and body) must arrive within this. */
  HTTP_REQUEST_TIMEOUT_MS: int(120_000, 1000, 3_600_000),
  /** An idle keep-alive connection is closed after this (longer than load balancers' 60 s, so they close first). */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int(65_000, 1000, 600_000),
  /** Open connections a process accepts; past it new ones are closed on arrival (logged, counted). 0: no cap. */
  MAX_CONNECTIONS: int(16_384, 0),
  /** Open connections one client address may hold (TRUSTED_PROXIES exempt); past it its new ones are closed on arrival. 0: no cap. */
  MAX_CONNECTIONS_PER_IP: int(256, 0),
  /** Bearer token /metrics requires. Unset: /metrics answers loopback peers only. */
  METRICS_TOKEN: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(16).optional()),
  /** scrypt cost of new password hashes (a power of two); stored hashes keep their own. */
  PASSWORD_SCRYPT_N: int(32_768, 1024, 1_048_576).refine((n) => (n & (n - 1)) === 0, 'must be a power of two'),
  /** Spec limits: read API per org, write API per org, guide surface per site; auth routes per client IP. */
  READ_RATE_LIMIT_PER_MIN: int(100, 1),
  /**
   * Browser origins besides PUBLIC_BASE_URL's that may call POST /v1/mcp (comma-separated, e.g. a web-based MCP
   * inspector's). A request with any other Origin header is refused (403); requests without one (desktop assistants,
   * servers) are not affected.
   */
  // An array is a loaded config handed back to loadConfig (tests, replicas built from a config): taken as it was parsed.
  MCP_ALLOWED_ORIGINS: z
    .preprocess((v) => (v === undefined ? '' : Array.isArray(v) ? v.join(',') : v), z.string())
    .transform((v) =>
      v
        .split(',')
        .map((o) => o.trim())
        .filter((o) => o !== ''),
    )
    .pipe(
      z.array(
        z.string().refine((o) => {
          try {
            return new URL(o).origin === o;
          } catch {
            return false;
          }
        }, 'must be origins like https://inspector.example (scheme, host, port; no path)'),
      ),
    ),
  WRITE_RATE_LIMIT_PER_MIN: int(30, 1),
  GUIDE_RATE_LIMIT_PER_MIN: int(200, 1),
  AUTH_RATE_LIMIT_PER_MIN: int(20, 1),
  /** Sign-in attempts per account (email) per 15 minutes, whatever address they come from. */
  LOGIN_ATTEMPTS_PER_ACCOUNT: int(10, 1),
  /** Requests per minute per client IP that present no valid credential (401s) on the API. */
  UNAUTH_RATE_LIMIT_PER_MIN: int(60, 1),
  /** How long ingest trusts an org's monthly session count before counting again. */
  QUOTA_CACHE_TTL_MS: int(60_000, 0),
  /**
   * Outbound calls (webhooks, Slack, PagerDuty, screenshots) and the URLs stored for them may reach loopback and
   * private networks (self-hosting, tests). Cloud metadata, link-local and multicast addresses stay refused.
   */
  OUTBOUND_ALLOW_PRIVATE_NETWORKS: bool(false),
  /**
   * Dogfooding: a publishable key (svc_pub_…) of the site the dashboard's own friction is reported to. Unset (the
   * default): the dashboard loads no SDK.
   */
  DASHBOARD_DOGFOOD_KEY: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .regex(/^svc_pub_\w+$/, 'must be a publishable key (svc_pub_…)')
      .optional(),
  ),
  /** Ingest base URL the dogfooding SDK loads from and reports to; unset: the dashboard's own origin (`friction start`). */
  DASHBOARD_DOGFOOD_INGEST_URL: optionalUrl,
  /**
   * `true` lets page screenshots render pages on loopback and private networks. Separate from
   * OUTBOUND_ALLOW_PRIVATE_NETWORKS: opening webhooks to private receivers must not let anyone who can set a site's
   * URL have a browser render the instance's own network. Cloud metadata, link-local and multicast stay refused.
   */
  SCREENSHOT_ALLOW_PRIVATE_NETWORKS: bool(false),
  /** Page screenshots: `auto` captures when CHROMIUM_PATH exists (off otherwise), `off` never captures. */
  SCREENSHOTS: z.enum(['auto', 'off']).default('auto'),
  /** The Chromium executable screenshots run in (Debian's package by default). */
  CHROMIUM_PATH: z.string().default('/usr/bin/chromium'),
  /** Captures a site may start per UTC day (successful or not); past it the route answers reason `limit_reached`. */
  SCREENSHOTS_PER_SITE_PER_DAY: int(50, 1, 100_000),
  /** Deadline of one capture (navigation and render); past it the capture fails as `render_failed`. */
  SCREENSHOT_TIMEOUT_MS: int(15_000, 1000, 120_000),
  /** SMTP server for email alerts and account mail (nodemailer URL form, e.g. smtp://user:pass@mail.example:587). Unset: email alerts fail visibly in the delivery log; addresses are not verified. */
  SMTP_URL: z.preprocess(
    (v) => (v === '' ? undefined : v),
    z
      .string()
      .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
      .optional(),
  ),
  /** Sender address of emails. */
  SMTP_FROM: z.string().default('Friction <friction@localhost>'),
  /** Origin Slack incoming webhooks are sent to (the stored https://hooks.slack.com URL keeps its path). */
  SLACK_WEBHOOK_BASE_URL: z.string().url().default('https://hooks.slack.com'),
  /** Slack Web API base (bot tokens: chat.postMessage). */
  SLACK_API_BASE_URL: z.string().url().default('https://slack.com/api'),
  /** PagerDuty Events API v2 enqueue URL. */
  PAGERDUTY_EVENTS_URL: z.string().url().default('https://events.pagerduty.com/v2/enqueue'),
});
export type Config = Readonly<z.infer<typeof EnvSchema>>;

function validProxyList(v: string): boolean {
  return v
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .every((p) => parseCidr(p) !== null);
}

/** `10.0.0.0/8`, `::1`, `192.168.1.5` → address, prefix and family; null when malformed. */
export function parseCidr(entry: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const [address, bits, ...rest] = entry.trim().split('/');
  const v = isIP(address);
  if (!v || rest.length) return null;
  const max = v === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (!/^\d+$/.test(bits ?? String(max)) || prefix > max) return null;
  return { address, prefix, family: v === 4 ? 'ipv4' : 'ipv6' };
}

/** Thrown when the environment is invalid; lists every bad variable. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.problems = problems;
  }
}

/** Parses the environment once. Only entry points call this; everything else receives slices. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Record<keyof Config, unknown>> = {},
): Config {
  const parsed = EnvSchema.safeParse({ ...env, ...overrides });
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  return Object.freeze(parsed.data);
}

/**
 * Parses a static PROCESSOR_PARTITIONS against EVENT_PARTITIONS into a sorted list of partition numbers (`auto`
 * without a lease bucket, the embedded single process, is all of them).
 */
export function ownedPartitions(spec: string, total: number): number[] {
  if (spec.trim() === 'all' || spec.trim() === 'auto') return Array.from({ length: total }, (_, i) => i);
  const out = new Set<number>();
  for (const part of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const range = /^(\d+)-(\d+)$/.exec(part);
    const [from, to] = range ? [Number(range[1]), Number(range[2])] : [Number(part), Number(part)];
    if (!Number.isInteger(from) || !Number.isInteger(to) || from > to || to >= total) {
      throw new ConfigError([`PROCESSOR_PARTITIONS: "${part}" is not within 0..${total - 1}`]);
    }
    for (let p = from; p <= to; p++) out.add(p);
  }
  return [...out].sort((a, b) => a - b);
}
