/**
 * docker-compose.yml must start on a fresh volume (issue 12, item 4). No Docker engine runs here, so the file is
 * parsed (YAML merge keys resolved, as compose does) and checked for the properties that made `docker compose up`
 * fail or leak: TCP database healthcheck, healthchecks everywhere and waited on, init, pinned tags, the secret and
 * base URL set, and a build context without node_modules or .friction/.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { parse } from 'yaml';

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
}

const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const ROLES = ['ingest', 'processor', 'api', 'dispatcher'];
const healthTest = (s: Service): string => [s.healthcheck?.test ?? []].flat().join(' ');

test('the database healthcheck goes over TCP (pg_isready -h), not the init server\'s socket', (t) => {
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
    t.deepEqual(services[role].depends_on, {
      migrate: { condition: 'service_completed_successfully' },
      nats: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
    }, role);
  }
  t.deepEqual(services.migrate.depends_on, { timescaledb: { condition: 'service_healthy' } });
  t.deepEqual(services.migrate.command, ['migrate']);
  t.true(Number(services.migrate.environment?.MIGRATE_CONNECT_TIMEOUT_MS) >= 30_000, 'migrate retries its connection for a while');
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
    t.regex(env.FRICTION_SECRET ?? '', /^\$\{FRICTION_SECRET:\?.+\}$/, `${role}: compose stops with a message when it is unset`);
    t.regex(env.PUBLIC_BASE_URL ?? '', /^\$\{\w+:-http:\/\/localhost:\d+\}$/, role);
  }
  t.regex(services.ingest.environment!.PUBLIC_BASE_URL, /8081/, 'ingest\'s base URL is the ingest port');
  t.regex(services.api.environment!.PUBLIC_BASE_URL, /8082/);
});

test('.dockerignore keeps node_modules, .friction/ (credentials) and .git out of the build context', (t) => {
  const lines = readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
  for (const p of ['node_modules', '.friction', '.git', '.env']) t.true(lines.includes(p), p);
});
