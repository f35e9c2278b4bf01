/**
 * docker-compose.yml must start on a fresh volume (issue 12, item 4). No Docker engine runs here, so the file is
 * parsed (YAML merge keys resolved, as compose does) and checked for the properties that made `docker compose up`
 * fail or leak: TCP database healthcheck, healthchecks everywhere and waited on, init, pinned tags, the secret and
 * base URL set, and a build context without node_modules or .friction/.
 */
import { execFile, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { parse } from 'yaml';
import { EnvSchema } from '../shared/config.ts';
import { serverModeProblem, type InfraCommand } from '../shared/deployment-mode.ts';
import { freePort } from '../shared/testing/processes.ts';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  init?: boolean;
  restart?: string;
  environment?: Record<string, string>;
  healthcheck?: { test: string[] | string };
  depends_on?: Record<string, { condition: string }>;
  profiles?: string[];
}

const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const services = compose.services;
const ROLES = ['ingest', 'processor', 'api', 'dispatcher'];
const healthTest = (s: Service): string => [s.healthcheck?.test ?? []].flat().join(' ');

test("the database healthcheck goes over TCP (pg_isready -h), not the init server's socket", (t) => {
  t.regex(healthTest(services.timescaledb), /pg_isready\b.*\s-h\s+(127\.0\.0\.1|localhost)\b/);
});

test('NATS, Redis and every role have a healthcheck; the roles check with node (the slim image has no curl)', (t) => {
  t.regex(healthTest(services.nats), /healthz/);
  t.regex(healthTest(services.redis), /redis-cli ping/);
  for (const role of ROLES) {
    const h = healthTest(services[role]);
    t.regex(h, /^CMD node -e .*\/healthz/, role);
    t.notRegex(h, /curl|wget/, `${role}: no curl or wget in node:24-bookworm-slim`);
  }
});

test('the roles wait for a finished migrate and healthy NATS and Redis; migrate waits for a healthy database', (t) => {
  for (const role of ROLES) {
    t.deepEqual(
      services[role].depends_on,
      {
        migrate: { condition: 'service_completed_successfully' },
        nats: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
      },
      role,
    );
  }
  t.deepEqual(services.migrate.depends_on, { timescaledb: { condition: 'service_healthy' } });
  t.deepEqual(services.migrate.command, ['migrate']);
  t.true(
    Number(services.migrate.environment?.MIGRATE_CONNECT_TIMEOUT_MS) >= 30_000,
    'migrate retries its connection for a while',
  );
});

test('node runs under an init (signals reach it, zombies are reaped)', (t) => {
  for (const name of [...ROLES, 'migrate']) t.true(services[name].init, name);
});

test('every image tag is pinned: no latest, no missing tag', (t) => {
  for (const [name, s] of Object.entries(services)) {
    if (s.build) continue;
    const tag = s.image?.split(':')[1] ?? '';
    t.truthy(tag, `${name}: ${s.image} has a tag`);
    t.false(/latest/.test(tag), `${name}: ${s.image}`);
    t.regex(tag, /\d+\.\d+/, `${name}: ${s.image} names a minor version at least`);
  }
});

test('FRICTION_SECRET is required and PUBLIC_BASE_URL set for every role', (t) => {
  for (const role of ROLES) {
    const env = services[role].environment ?? {};
    t.regex(
      env.FRICTION_SECRET ?? '',
      /^\$\{FRICTION_SECRET:\?.+\}$/,
      `${role}: compose stops with a message when it is unset`,
    );
    t.regex(env.PUBLIC_BASE_URL ?? '', /^\$\{\w+:-http:\/\/localhost:\d+\}$/, role);
  }
  t.regex(services.ingest.environment!.PUBLIC_BASE_URL, /8081/, "ingest's base URL is the ingest port");
  t.regex(services.api.environment!.PUBLIC_BASE_URL, /8082/);
});

test('.dockerignore keeps node_modules, .friction/ (credentials) and .git out of the build context', (t) => {
  const lines = readFileSync(path.join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim());
  for (const p of ['node_modules', '.friction', '.git', '.env']) t.true(lines.includes(p), p);
});

test('every role has the settings server mode requires (a missing URL would stop it at start)', (t) => {
  for (const role of ROLES) {
    const env = services[role].environment ?? {};
    t.is(
      serverModeProblem(
        { FRICTION_MODE: 'auto', DATABASE_URL: env.DATABASE_URL, NATS_URL: env.NATS_URL, REDIS_URL: env.REDIS_URL },
        role as InfraCommand,
      ),
      null,
      role,
    );
  }
  t.is(
    serverModeProblem(
      {
        FRICTION_MODE: 'auto',
        DATABASE_URL: services.migrate.environment?.DATABASE_URL,
        NATS_URL: undefined,
        REDIS_URL: undefined,
      },
      'migrate',
    ),
    null,
  );
});

/**
 * ops/Dockerfile, parsed (issue 28, item 1): no Docker engine runs here, so its instructions are read and checked,
 * and its build steps are replayed below in an empty directory.
 */
interface Instruction {
  op: string;
  args: string;
}
function dockerfile(): Instruction[] {
  const text = readFileSync(path.join(root, 'ops', 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(' ') };
    });
}
const steps = dockerfile();
const all = (op: string) => steps.filter((s) => s.op === op);

test('Dockerfile: a pinned Node 24 base, non-root, a healthcheck on /healthz with node, the CLI as entrypoint', (t) => {
  t.regex(all('FROM')[0].args, /^node:24\.\d+\.\d+-bookworm-slim$/, 'a pinned patch version');
  const last = steps.map((s) => s.op);
  const user = all('USER').at(-1)?.args;
  t.truthy(user);
  t.notRegex(user!, /^(root|0)(:|$)/, 'runs as a non-root user');
  t.true(last.lastIndexOf('USER') < last.indexOf('ENTRYPOINT'));
  const health = all('HEALTHCHECK')[0]?.args ?? '';
  t.regex(health, /CMD \["node", "-e", .*\/healthz/);
  t.notRegex(health, /curl|wget/);
  t.is(all('ENTRYPOINT')[0].args, '["node", "ops/cli.ts"]');
  t.is(all('CMD').at(-1)?.args, '["start"]');
});

test('Dockerfile: Chromium from Debian by default (screenshots work in compose), at the path CHROMIUM_PATH defaults to', (t) => {
  t.is(all('ARG').find((a) => a.args.startsWith('WITH_CHROMIUM='))?.args, 'WITH_CHROMIUM=true');
  const install = all('RUN').find((r) => /apt-get install/.test(r.args))?.args ?? '';
  t.regex(install, /--no-install-recommends chromium\b/);
  t.is(
    EnvSchema.shape.CHROMIUM_PATH.parse(undefined),
    '/usr/bin/chromium',
    "Debian's chromium package installs /usr/bin/chromium",
  );
});

/** Top-level folders the CLI reaches through relative imports, static and dynamic: what the image must contain. */
function runtimeFolders(): Set<string> {
  const seen = new Set<string>();
  const folders = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file) || /\.test\.ts$/.test(file)) return;
    seen.add(file);
    folders.add(path.relative(root, file).split(path.sep)[0]);
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(
      /(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g,
    )) {
      const target = path.resolve(path.dirname(file), m[1] ?? m[2]);
      if (/\.ts$/.test(target) && existsSync(target)) visit(target);
    }
  };
  visit(path.join(root, 'ops', 'cli.ts'));
  return folders;
}

test('Dockerfile: every folder the CLI imports at run time is copied, and no source is kept out by .dockerignore', (t) => {
  const copied = all('COPY')
    .map((c) => c.args.split(/\s+/))
    .filter((a) => !a[0].startsWith('--'))
    .flatMap((a) => a.slice(0, -1));
  for (const folder of runtimeFolders()) t.true(copied.includes(folder), `COPY ${folder}`);
  const ignored = readFileSync(path.join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  for (const src of copied) {
    t.true(existsSync(path.join(root, src)), `${src} exists`);
    t.false(ignored.includes(src), `${src} is in the build context`);
  }
  t.regex(
    all('RUN')
      .map((r) => r.args)
      .join('\n'),
    /npm ci --omit=dev/,
  );
});

/**
 * The build replayed without an engine, in an empty directory: `npm ci --omit=dev` from the lockfile, the COPY
 * sources, the RUN steps that run node; then the image's command (`friction start`, embedded) must serve. This is
 * also the lean-install check (issue 28, item 6): the production install runs the service. Size and package count
 * are logged.
 */
test('Dockerfile dry run: the production install (npm ci --omit=dev) builds the SDK and runs friction start', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'friction-image-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // Node 24 first on PATH, as in the node:24 base image.
  const env = {
    PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
    HOME: dir,
    NODE_ENV: 'production',
    npm_config_cache: process.env.npm_config_cache ?? path.join(process.env.HOME ?? '/root', '.npm'),
  };
  for (const step of steps) {
    if (step.op === 'COPY') {
      const parts = step.args.split(/\s+/);
      for (const src of parts.slice(0, -1))
        cpSync(path.join(root, src), path.join(dir, path.basename(src)), {
          recursive: true,
          filter: (p) => !/\/(node_modules|dist|\.friction)(\/|$)/.test(p),
        });
    } else if (step.op === 'RUN' && /npm ci/.test(step.args)) {
      const r = await exec('npm', ['ci', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'], dir, env);
      t.is(r.code, 0, r.stderr);
    } else if (step.op === 'RUN' && /^node /.test(step.args)) {
      const r = await exec('sh', ['-c', step.args], dir, env);
      t.is(r.code, 0, r.stderr);
    }
  }
  const du = await exec('du', ['-sk', 'node_modules'], dir, env);
  const packages = JSON.parse(readFileSync(path.join(dir, 'node_modules', '.package-lock.json'), 'utf8')) as {
    packages: Record<string, unknown>;
  };
  t.log(
    `production install: ${Object.keys(packages.packages).length} packages, ${Math.round(Number(du.stdout.split('\t')[0]) / 1024)} MB`,
  );
  t.false(existsSync(path.join(dir, 'node_modules', '@scalar')), 'the docs UI is vendored, not installed');
  t.false(existsSync(path.join(dir, 'node_modules', 'testcontainers')));

  const port = await freePort();
  const child = spawn(process.execPath, ['ops/cli.ts', 'start'], {
    cwd: dir,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGTERM');
      }),
  );
  const base = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 120_000; ; ) {
    if (child.exitCode !== null) throw new Error(`friction start exited ${child.exitCode}: ${stderr}`);
    if ((await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200) break;
    if (Date.now() > deadline) throw new Error(`not ready in 120 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const docs = await fetch(`${base}/docs/scalar.js`);
  t.is(docs.status, 200);
  t.true((await docs.text()).includes('createApiReference'));
  t.is((await fetch(`${base}/v1/sdk.js`)).status, 200);
});

function exec(
  cmd: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('the scale profile: a three-node NATS cluster routed to each other, R3 streams on request, and a second processor that waits for the cluster', (t) => {
  const nodes = ['nats-1', 'nats-2', 'nats-3'];
  for (const name of nodes) {
    const s = services[name];
    t.deepEqual(s.profiles, ['scale'], name);
    const cmd = s.command ?? [];
    t.true(cmd.includes('-js'), `${name}: JetStream on`);
    t.is(cmd[cmd.indexOf('--server_name') + 1], name);
    t.is(cmd[cmd.indexOf('--cluster_name') + 1], 'friction');
    t.deepEqual(
      cmd[cmd.indexOf('--routes') + 1].split(','),
      nodes.map((n) => `nats://${n}:6222`),
    );
    t.regex(healthTest(s), /healthz\?js-enabled-only=true/);
  }
  const second = services['processor-2'];
  t.deepEqual(second.profiles, ['scale']);
  t.deepEqual(second.command, ['processor']);
  for (const n of nodes) t.is(second.depends_on?.[n]?.condition, 'service_healthy');
  // Every role (both processors included) reads the cluster URL and the replica count from the same two variables.
  for (const role of [...ROLES, 'processor-2']) {
    const env = services[role].environment ?? {};
    t.is(env.NATS_URL, '${FRICTION_NATS_URL:-nats://nats:4222}', role);
    t.is(env.NATS_STREAM_REPLICAS, '${FRICTION_NATS_REPLICAS:-1}', role);
  }
  // The default `docker compose up` starts none of it.
  for (const [name, s] of Object.entries(services))
    if (!nodes.includes(name) && name !== 'processor-2') t.is(s.profiles, undefined, name);
  t.true(EnvSchema.shape.NATS_STREAM_REPLICAS.safeParse('3').success);
  t.true(EnvSchema.shape.PROCESSOR_PARTITIONS.parse(undefined) === 'auto');
});
