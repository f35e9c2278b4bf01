/**
 * `friction doctor`: what a CI job or a new user checks before relying on a Friction service. Reachability and
 * version (/healthz), the key (a read the key must be allowed), the site. Exit 0 when every check passed, 1 when
 * one failed, 2 on usage errors.
 */
import { parseArgs } from 'node:util';
import { SERVICE_OPTIONS, stringOptions, unreachable, type CliIo } from '../ops/deploy-cli.ts';

export const DOCTOR_USAGE = `friction doctor [--base-url URL] [--key KEY] [--site ID]

Checks that the service answers and which version it runs, that the key is accepted, and that it may read the
site's deploys. Exit 0 when every check passed, 1 when one failed, 2 on usage errors.`;

type Check = { ok: boolean; line: string };

async function get(io: CliIo, url: string, key?: string): Promise<{ status: number; body: any } | { error: string }> {
  try {
    const res = await io.fetch(url, {
      headers: key ? { authorization: `Bearer ${key}` } : {},
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.status, body };
  } catch (err) {
    return { error: unreachable(err) };
  }
}

/** Same major version (0.x: same minor), as semver promises compatibility. */
function compatible(a: string, b: string): boolean {
  const [am, an] = a.split('.').map(Number);
  const [bm, bn] = b.split('.').map(Number);
  return am === bm && (am !== 0 || an === bn);
}

export async function runDoctorCommand(argv: readonly string[], io: CliIo, cliVersion: string): Promise<number> {
  let values: { 'base-url'?: string; key?: string; site?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      options: { ...stringOptions(...SERVICE_OPTIONS), help: { type: 'boolean' } },
    }));
  } catch (err) {
    io.err(`friction doctor: ${(err as Error).message}\n\n${DOCTOR_USAGE}`);
    return 2;
  }
  if (values.help) {
    io.out(DOCTOR_USAGE);
    return 0;
  }
  const base = (values['base-url'] ?? io.env.FRICTION_BASE_URL)?.replace(/\/+$/, '');
  const key = values.key ?? io.env.FRICTION_SECRET_KEY;
  const site = values.site ?? io.env.FRICTION_SITE_ID;
  if (!base || !/^https?:\/\//.test(base)) {
    io.err(
      `friction doctor: --base-url (or FRICTION_BASE_URL) must be an http(s) URL${base ? `, not ${base}` : ''}\n\n${DOCTOR_USAGE}`,
    );
    return 2;
  }
  const checks: Check[] = [];
  const health = await get(io, `${base}/healthz`);
  if (!('error' in health) && health.body?.data?.status === 'starting') {
    checks.push({ ok: false, line: `service: ${base} is still starting: try again in a few seconds` });
  } else if ('error' in health || health.status !== 200 || health.body?.data?.status !== 'ok') {
    checks.push({
      ok: false,
      line: `service: ${base} does not answer /healthz (${'error' in health ? health.error : `HTTP ${health.status}`})`,
    });
  } else {
    const version: string | undefined = health.body.data.version;
    checks.push({ ok: true, line: `service: ${base} answers (role ${health.body.data.role})` });
    if (!version)
      checks.push({
        ok: false,
        line: 'version: the service does not say its version (older than this CLI): upgrade it',
      });
    else
      checks.push(
        compatible(version, cliVersion)
          ? { ok: true, line: `version: service ${version}, CLI ${cliVersion}` }
          : {
              ok: false,
              line: `version: service ${version} and CLI ${cliVersion} differ in a breaking way: install the CLI of the service's version`,
            },
      );
  }
  if (!key) checks.push({ ok: false, line: 'key: none given (--key or FRICTION_SECRET_KEY)' });
  else if (checks[0].ok) {
    if (!key.startsWith('svc_sec_'))
      checks.push({ ok: false, line: `key: ${key.slice(0, 8)}… is not a secret key (svc_sec_…): deploys need one` });
    // A read every CI key needs; without a site the server answers 400 for the missing site_id only once the key passed.
    const r = await get(
      io,
      `${base}/v1/query/deploys?limit=1${site ? `&site_id=${encodeURIComponent(site)}` : ''}`,
      key,
    );
    const code = 'error' in r ? r.error : `${r.status} ${r.body?.error?.code ?? ''}`.trim();
    if ('error' in r) checks.push({ ok: false, line: `key: the check failed (${code})` });
    else if (r.status === 401) checks.push({ ok: false, line: `key: refused (${code}): unknown or revoked` });
    else if (r.status === 403)
      checks.push({ ok: false, line: `key: accepted but may not read deploys (${code}: it needs query:read)` });
    else if (!site)
      checks.push(
        r.status === 400
          ? { ok: true, line: 'key: accepted (give --site or FRICTION_SITE_ID to check the site too)' }
          : { ok: false, line: `key: unexpected answer ${code}` },
      );
    else if (r.status === 200)
      checks.push({
        ok: true,
        line: `key: accepted; site ${site}: readable (${r.body?.data?.total ?? 0} deploys recorded)`,
      });
    else if (r.status === 404 || r.status === 400)
      checks.push({ ok: false, line: `site: ${site} is not a site this key may read (${code})` });
    else checks.push({ ok: false, line: `key: unexpected answer ${code}` });
  }
  for (const c of checks) io.out(`${c.ok ? 'ok  ' : 'FAIL'} ${c.line}`);
  return checks.every((c) => c.ok) ? 0 : 1;
}
