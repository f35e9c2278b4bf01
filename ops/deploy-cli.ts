/**
 * `friction deploy record|check`: the CI gate. Talks to a running service over HTTP with a secret key, so it
 * needs nothing of the service's configuration. Exit codes: 0 PASS (or recorded), 1 FAIL (and WARN with
 * `--fail-on warn`), 2 usage, connection or API errors.
 */
import { parseArgs } from 'node:util';

export const DEPLOY_USAGE = `friction deploy record --version V [--environment production|staging] [--commit SHA] [--url URL]
                      [--description TEXT] [--idempotency-key KEY]
friction deploy check (--deploy ID | --version V) [--environment production|staging] [--timeout 2h]
                      [--interval 30s] [--fail-on fail|warn]

  --base-url URL   the service (env FRICTION_BASE_URL)
  --key KEY        a secret key with manage:write (record) or query:read (check) (env FRICTION_SECRET_KEY)
  --site ID        the site (env FRICTION_SITE_ID; record may omit it: the key's own site)

check waits until the verdict is PASS or FAIL (or --timeout passes), printing progress to stderr, then prints the
verdict and its reasons. Exit 0 on PASS, 1 on FAIL (and on WARN with --fail-on warn), 2 on usage or connection errors.`;

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: Record<string, string | undefined>;
  fetch: typeof fetch;
  sleep(ms: number): Promise<void>;
  now(): number;
}

export const defaultIo: CliIo = {
  out: (l) => process.stdout.write(`${l}\n`),
  err: (l) => process.stderr.write(`${l}\n`),
  env: process.env,
  fetch: (...a) => fetch(...a),
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  now: () => Date.now(),
};

class UsageError extends Error {}

/** parseArgs options that each take one string value, by name. */
export function stringOptions<const N extends string>(...names: N[]): Record<N, { type: 'string' }> {
  return Object.fromEntries(names.map((n) => [n, { type: 'string' }])) as Record<N, { type: 'string' }>;
}

/** The options of every command that talks to a service: where it is, the key, the site (each also from the env). */
export const SERVICE_OPTIONS = ['base-url', 'key', 'site'] as const;
/** `deploy record`'s options (version and environment also pick the deploy `check` waits for). */
const RECORD_OPTIONS = ['version', 'environment', 'commit', 'url', 'description', 'idempotency-key'] as const;
const CHECK_OPTIONS = ['deploy', 'timeout', 'interval', 'fail-on'] as const;

/** `90s`, `15m`, `2h`, `1d` or plain milliseconds. */
export function parseDuration(s: string): number {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(s.trim());
  if (!m) throw new UsageError(`not a duration: ${s} (use e.g. 90s, 15m, 2h)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? 'ms') as 'ms'];
  return Number(m[1]) * unit;
}

interface Deploy {
  id: string;
  version: string;
  environment: string;
  confusion_before: number;
  confusion_after: number | null;
  delta: number | null;
  verdict: 'PASS' | 'WARN' | 'FAIL';
  verdict_reasons: string[];
  related_issues: { relation: string; title: string }[];
}

class ApiError extends Error {}

/** Why a request never got an answer: fetch's own message is "fetch failed"; the cause says ECONNREFUSED, ENOTFOUND… */
export function unreachable(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

async function call(
  io: CliIo,
  base: string,
  key: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<any> {
  let res: Response;
  try {
    res = await io.fetch(`${base.replace(/\/+$/, '')}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(`cannot reach ${base}: ${unreachable(err)}`);
  }
  const text = await res.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError(`${method} ${path}: HTTP ${res.status}, not a JSON answer`);
  }
  if (!res.ok)
    throw new ApiError(
      `${method} ${path}: HTTP ${res.status} ${parsed?.error?.code ?? ''}: ${parsed?.error?.message ?? text}`,
    );
  return parsed.data;
}

/** Runs `friction deploy …`; resolves to the process exit code. */
export async function runDeployCommand(argv: readonly string[], io: CliIo = defaultIo): Promise<number> {
  try {
    const [sub, ...rest] = argv;
    if (sub === '--help' || sub === 'help') {
      io.out(DEPLOY_USAGE);
      return 0;
    }
    if (sub !== 'record' && sub !== 'check')
      throw new UsageError(sub ? `unknown deploy command: ${sub}` : 'missing deploy command');
    const { values } = parseArgs({
      args: [...rest],
      strict: true,
      options: stringOptions(...SERVICE_OPTIONS, ...RECORD_OPTIONS, ...CHECK_OPTIONS),
    });
    const base = values['base-url'] ?? io.env.FRICTION_BASE_URL;
    const key = values.key ?? io.env.FRICTION_SECRET_KEY;
    const site = values.site ?? io.env.FRICTION_SITE_ID;
    if (!base) throw new UsageError('--base-url (or FRICTION_BASE_URL) is required');
    if (!/^https?:\/\//.test(base)) throw new UsageError(`--base-url must be an http(s) URL: ${base}`);
    if (!key) throw new UsageError('--key (or FRICTION_SECRET_KEY) is required');
    const environment = values.environment ?? 'production';
    if (environment !== 'production' && environment !== 'staging')
      throw new UsageError(`--environment must be production or staging, not ${environment}`);

    if (sub === 'record') {
      if (!values.version) throw new UsageError('record needs --version');
      const body = {
        version: values.version,
        environment,
        ...(site ? { site_id: site } : {}),
        ...(values.commit ? { commit_sha: values.commit } : {}),
        ...(values.url ? { url: values.url } : {}),
        ...(values.description ? { description: values.description } : {}),
      };
      const headers: Record<string, string> = values['idempotency-key']
        ? { 'idempotency-key': values['idempotency-key'] }
        : {};
      const d = (await call(io, base, key, 'POST', '/v1/deploys', body, headers)) as Deploy & { site_id: string };
      io.out(
        `deploy ${d.id} recorded: version ${d.version} (${d.environment}), site ${d.site_id}, confusion_before ${d.confusion_before}`,
      );
      return 0;
    }

    if (!site) throw new UsageError('check needs --site (or FRICTION_SITE_ID)');
    if (!values.deploy === !values.version)
      throw new UsageError('check needs exactly one of --deploy ID or --version V');
    const failOn = values['fail-on'] ?? 'fail';
    if (failOn !== 'fail' && failOn !== 'warn') throw new UsageError(`--fail-on must be fail or warn, not ${failOn}`);
    const timeoutMs = parseDuration(values.timeout ?? '2h');
    const intervalMs = Math.max(1000, parseDuration(values.interval ?? '30s'));
    const q = `site_id=${encodeURIComponent(site)}`;
    const fetchDeploy = async (): Promise<Deploy> => {
      if (values.deploy)
        return call(io, base, key, 'GET', `/v1/query/deploys/${encodeURIComponent(values.deploy)}?${q}`);
      const list = (await call(
        io,
        base,
        key,
        'GET',
        `/v1/query/deploys?${q}&environment=${environment}&limit=100`,
      )) as { deploys: Deploy[] };
      const found = list.deploys.find((d) => d.version === values.version);
      if (!found) throw new ApiError(`no ${environment} deploy with version ${values.version} among the latest 100`);
      return found;
    };
    const started = io.now();
    let d = await fetchDeploy();
    while (d.verdict === 'WARN' && io.now() - started < timeoutMs) {
      io.err(`waiting (${Math.round((io.now() - started) / 1000)}s): ${d.verdict} — ${d.verdict_reasons.join('; ')}`);
      await io.sleep(Math.min(intervalMs, Math.max(0, timeoutMs - (io.now() - started))));
      d = await fetchDeploy();
    }
    io.out(
      `${d.verdict}: deploy ${d.id} version ${d.version} (${d.environment}), confusion ${d.confusion_before} → ${d.confusion_after ?? 'n/a'} (delta ${d.delta ?? 'n/a'})`,
    );
    for (const r of d.verdict_reasons) io.out(`  - ${r}`);
    for (const r of d.related_issues) io.out(`  ${r.relation}: ${r.title}`);
    if (d.verdict === 'FAIL') return 1;
    if (d.verdict === 'WARN') return failOn === 'warn' ? 1 : 0;
    return 0;
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith?.('ERR_PARSE_ARGS')) {
      io.err(`friction deploy: ${(err as Error).message}\n\n${DEPLOY_USAGE}`);
      return 2;
    }
    if (err instanceof ApiError) {
      io.err(`friction deploy: ${err.message}`);
      return 2;
    }
    throw err;
  }
}
