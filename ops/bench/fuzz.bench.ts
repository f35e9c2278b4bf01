/**
 * `npm run bench -- fuzz [--per-op 40] [--seed 1]`: a bounded fuzz run over every operation of the OpenAPI document,
 * against an embedded Friction (every role, PGlite, in-process bus) in this process. For each operation it sends
 * `per-op` requests mixing valid and hostile path parameters, query values and bodies generated from the operation's
 * own schemas (wrong types, boundaries, 5e-324, year 0000, NUL and lone surrogates, unknown fields, deep nesting),
 * under several credentials (the owner, a site key, a publishable key, none, garbage). It prints the 5xx count and
 * the envelope violations: an error answer that is not `{data: null, error: {code, message, status}}` with `status`
 * equal to the HTTP status, or a JSON success without `error: null`. Non-JSON successes (CSV, the SDK, /docs) and
 * the OpenAPI document are not envelopes by design. Exit code 1 when there is a 5xx (503 `unavailable` included) or a violation.
 */
import { startTestStack } from '../testing/stack.ts';

type Schema = Record<string, any>;

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

const HOSTILE_STRINGS = [
  '',
  ' ',
  'a'.repeat(5000),
  '\u0000',
  '\ud800',
  '../../etc/passwd',
  '%2e%2e%2f',
  '{"$ne":null}',
  "' or 1=1--",
  '<script>',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '-1',
  '1e309',
  'null',
  '🙂',
];
/** A path segment; a lone surrogate (which encodeURIComponent refuses) goes as its CESU-8 bytes, invalid UTF-8. */
const pathSegment = (text: string): string => {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
};
const HOSTILE_NUMBERS = [0, -1, 1, 5e-324, 1e308, -1e308, 2 ** 31, 2 ** 53 + 1, 0.5, 100.0001, 1001];

export async function runBench(args: string[]): Promise<void> {
  const opt = (name: string, def: number) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? Number(args[i + 1]) : def;
  };
  const perOp = opt('per-op', 40);
  const rand = rng(opt('seed', 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const stack = await startTestStack({
    embedded: true,
    processor: false,
    env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'false' },
  });
  try {
    const { tenant } = stack;
    const doc = (await (await fetch(`${stack.baseUrl}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, any>>;
      components?: { schemas?: Record<string, Schema> };
    };
    const components = doc.components?.schemas ?? {};
    const deref = (s: Schema | undefined): Schema => {
      let x = s ?? {};
      for (let i = 0; i < 10 && typeof x.$ref === 'string'; i++) x = components[x.$ref.split('/').pop()!] ?? {};
      return x;
    };
    const throwaway = await stack.newUser(tenant, 'admin');
    const known: Record<string, string> = { site_id: tenant.siteId, org_id: tenant.orgId };
    const credentials = [
      tenant.owner.token,
      tenant.secretKey,
      tenant.publishableKey,
      undefined,
      'svc_sec_garbage',
      'eyJhbGciOiJub25lIn0.e30.',
    ];

    /** A value for `schema`: valid-looking most of the time, hostile otherwise. */
    const gen = (schema0: Schema | undefined, depth = 0, name = ''): unknown => {
      const schema = deref(schema0);
      if (rand() < 0.15) return pick([...HOSTILE_STRINGS, ...HOSTILE_NUMBERS, null, true, [], {}, nest(depth + 60)]);
      if (schema.anyOf || schema.oneOf) return gen(pick(schema.anyOf ?? schema.oneOf), depth, name);
      if (schema.enum) return pick(schema.enum);
      if (schema.const !== undefined) return schema.const;
      const type = Array.isArray(schema.type) ? pick(schema.type) : schema.type;
      switch (type) {
        case 'string':
          if (known[name] && rand() < 0.7) return known[name];
          if (schema.format === 'uuid') return rand() < 0.5 ? crypto.randomUUID() : pick(HOSTILE_STRINGS);
          if (schema.format === 'date-time')
            return pick([
              new Date().toISOString(),
              '0000-06-01T00:00:00Z',
              '10000-01-01T00:00:00Z',
              '2026-02-30T00:00:00Z',
            ]);
          if (schema.format === 'email') return pick(['a@b.example', 'x@@y', `${'a'.repeat(300)}@b.example`]);
          if (schema.format === 'uri')
            return pick([
              'https://hooks.slack.com//evil.example/x',
              'http://169.254.169.254/',
              'https://ok.example/hook',
              'ftp://x',
            ]);
          return pick([
            'x',
            'valid name',
            String(schema.maxLength ? 'y'.repeat(schema.maxLength + 1) : 'z'),
            pick(HOSTILE_STRINGS),
          ]);
        case 'integer':
        case 'number':
          return pick([
            schema.minimum ?? 0,
            schema.maximum ?? 100,
            (schema.minimum ?? 0) - 1,
            (schema.maximum ?? 100) + 1,
            ...HOSTILE_NUMBERS,
          ]);
        case 'boolean':
          return rand() < 0.5;
        case 'array':
          return depth > 4 ? [] : Array.from({ length: Math.floor(rand() * 4) }, () => gen(schema.items, depth + 1));
        case 'object': {
          if (depth > 4) return {};
          const out: Record<string, unknown> = {};
          for (const [k, v] of Object.entries(schema.properties ?? {})) {
            if ((schema.required ?? []).includes(k) || rand() < 0.5) out[k] = gen(v as Schema, depth + 1, k);
          }
          if (rand() < 0.1) out[pick(['id', 'role', 'org_id', '__proto__', 'signing_secret'])] = 'mass-assigned';
          return out;
        }
        default:
          return pick(['x', 1, null]);
      }
    };
    const nest = (levels: number): unknown => {
      let v: unknown = 1;
      for (let i = 0; i < levels; i++) v = [v];
      return v;
    };

    const counts = new Map<number, number>();
    const serverErrors: string[] = [];
    const violations: string[] = [];
    let requests = 0;
    const t0 = performance.now();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!['get', 'post', 'patch', 'delete', 'put'].includes(method)) continue;
        for (let i = 0; i < perOp; i++) {
          const params = (op.parameters ?? []) as { name: string; in: string; schema?: Schema; required?: boolean }[];
          let url = path;
          const qs = new URLSearchParams();
          for (const p of params) {
            const v = gen(p.schema, 0, p.name);
            const text = typeof v === 'string' ? v : JSON.stringify(v);
            if (p.in === 'path') url = url.replace(`{${p.name}}`, pathSegment(text ?? ''));
            else if (p.in === 'query' && (p.required || rand() < 0.6)) qs.set(p.name, text ?? '');
          }
          const bodySchema = op.requestBody?.content?.['application/json']?.schema;
          const body = bodySchema
            ? rand() < 0.1
              ? pick(['{', 'null', '[]', '"x"', '{"a":'.repeat(50)])
              : JSON.stringify(gen(bodySchema))
            : undefined;
          // Sign-out and password change with the owner's token would end the session every later request uses.
          const token = /\/auth\/(logout|password)$/.test(path) ? throwaway.token : pick(credentials);
          const headers: Record<string, string> = {};
          if (token) headers.authorization = `Bearer ${token}`;
          if (body !== undefined) headers['content-type'] = rand() < 0.95 ? 'application/json' : 'text/xml';
          const target = `${stack.baseUrl}${url}${qs.size ? `?${qs}` : ''}`;
          let res: Response;
          try {
            res = await fetch(target, {
              method: method.toUpperCase(),
              headers,
              body,
              signal: AbortSignal.timeout(15_000),
            });
          } catch (err) {
            violations.push(`${method.toUpperCase()} ${path}: no answer (${(err as Error).message})`);
            continue;
          }
          requests++;
          counts.set(res.status, (counts.get(res.status) ?? 0) + 1);
          const text = await res.text();
          const what = `${method.toUpperCase()} ${target.slice(stack.baseUrl.length, stack.baseUrl.length + 160)} → ${res.status}`;
          if (res.status >= 500) serverErrors.push(`${what} ${text.slice(0, 200)}`);
          const json = (res.headers.get('content-type') ?? '').includes('application/json');
          // The OpenAPI document itself is a document, not an envelope (like the CSV export and the SDK).
          if (res.status >= 400 || (json && path !== '/v1/openapi.json')) {
            let parsed: any;
            try {
              parsed = JSON.parse(text);
            } catch {
              violations.push(`${what}: not JSON`);
              continue;
            }
            const ok =
              res.status >= 400
                ? parsed?.data === null &&
                  typeof parsed?.error?.code === 'string' &&
                  typeof parsed?.error?.message === 'string' &&
                  parsed?.error?.status === res.status
                : parsed && 'data' in parsed && parsed.error === null;
            if (!ok) violations.push(`${what}: ${text.slice(0, 160)}`);
          }
        }
      }
    }
    const seconds = (performance.now() - t0) / 1000;
    const operations = Object.values(doc.paths).reduce(
      (n, ops) => n + Object.keys(ops).filter((m) => ['get', 'post', 'patch', 'delete', 'put'].includes(m)).length,
      0,
    );
    process.stdout.write(
      `fuzz: ${requests} requests over ${operations} operations in ${seconds.toFixed(1)} s (${(requests / seconds).toFixed(0)} req/s)\n`,
    );
    process.stdout.write(
      `statuses: ${[...counts]
        .sort((a, b) => a[0] - b[0])
        .map(([s, n]) => `${s}×${n}`)
        .join(' ')}\n`,
    );
    process.stdout.write(`5xx: ${serverErrors.length}; envelope violations: ${violations.length}\n`);
    for (const e of serverErrors.slice(0, 20)) process.stdout.write(`  5xx ${e}\n`);
    for (const v of violations.slice(0, 20)) process.stdout.write(`  violation ${v}\n`);
    if (serverErrors.length + violations.length > 0) process.exitCode = 1;
  } finally {
    await stack.stop();
  }
}
