#!/usr/bin/env node
import { loadConfig, ConfigError, type Config } from '../shared/config.ts';
import { createLogger } from '../shared/logger.ts';
import { openInfra, closeInfra, type Infra } from '../shared/infra.ts';
import { migrateToLatest } from '../shared/db/migrator.ts';
import { openDatabase } from '../shared/db/connection.ts';
import { ingestRole } from '../ingest/main.ts';
import { apiRole } from '../api/main.ts';
import { processorRole } from '../processor/main.ts';
import { dispatcherRole } from '../processor/dispatcher/main.ts';
import { serveRoles, closeServer, type RoleHttp } from './server.ts';
import { ensureDemoCredentials } from './bootstrap.ts';
import type { Server } from 'node:http';
import { parseArgs } from 'node:util';

const USAGE = `friction <command>

  start        every role in one process (embedded database, bus and limiter unless configured)
  ingest       the ingest role only
  processor    the processor role only
  api          the api role only
  dispatcher   the dispatcher role only (webhooks, Slack, PagerDuty, email; any number may run)
  migrate      apply database migrations
  bootstrap    create the demo org, site and keys if missing; print them (split deployments)
  recompute --site ID [--write]
               recompute a site's scores, issues and elements from its raw rows; report (and rewrite) differences
  demo         send realistic synthetic SDK traffic to a running instance (reads credentials.json)
  bench NAME   run a benchmark (pipeline, sdk, verify, ...)
  deploy record|check
               record a deploy / gate CI on its verdict (exit 0 PASS, 1 FAIL, 2 errors); friction deploy --help

Configuration is read from the environment; see the README's configuration table.`;

type Stopper = () => Promise<void>;

/** Stops in order on SIGINT/SIGTERM; a second signal or the timeout forces exit 1. */
function onShutdown(log: Infra['log'], timeoutMs: number, stop: Stopper): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, 'shutting down');
    setTimeout(() => {
      log.error('shutdown timed out');
      process.exit(1);
    }, timeoutMs).unref();
    stop().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

async function runRoles(config: Config, roles: ReadonlyArray<'ingest' | 'api' | 'processor' | 'dispatcher'>, name: string): Promise<void> {
  const log = createLogger(config.LOG_LEVEL, { role: name });
  // Single-process mode owns its database, so it migrates at start; split roles expect `friction migrate`.
  const infra = await openInfra(config, log, { migrate: name === 'start' });
  const http: RoleHttp[] = [];
  if (roles.includes('ingest')) http.push(ingestRole(infra));
  if (roles.includes('api')) http.push(apiRole(infra));
  const processor = roles.includes('processor') ? await processorRole(infra).start() : undefined;
  if (processor) http.push(processor.http);
  const dispatcher = roles.includes('dispatcher') ? await dispatcherRole(infra).start() : undefined;
  if (dispatcher) http.push(dispatcher.http);
  // credentials.json exists before the port opens, so whoever waits for /healthz can read it at once (with PORT=0
  // the address is only known after listening: then it is written right after).
  const plannedBaseUrl = config.PUBLIC_BASE_URL ?? (config.PORT ? `http://localhost:${config.PORT}` : undefined);
  let demo = name === 'start' && plannedBaseUrl ? await ensureDemoCredentials(infra, plannedBaseUrl) : undefined;
  const server: Server = await serveRoles(name, http, log, config.PORT, config.HOST);
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.PORT;
  log.info({ port, roles }, 'listening');
  if (name === 'start') {
    demo ??= await ensureDemoCredentials(infra, `http://localhost:${port}`);
    printCredentials(infra, demo);
  }
  processor?.running.done.catch((err) => {
    log.fatal({ err }, 'processor loop died');
    process.exit(1);
  });
  onShutdown(log, config.SHUTDOWN_TIMEOUT_MS, async () => {
    await closeServer(server);
    await processor?.running.stop();
    await dispatcher?.running.stop();
    await closeInfra(infra);
  });
}

function printCredentials(infra: Infra, { creds, created }: Awaited<ReturnType<typeof ensureDemoCredentials>>): void {
  const now = new Date().toISOString();
  const batch = JSON.stringify({
    session_id: 'readme-session-1',
    sent_at: now,
    context: { device: 'desktop', viewport: { w: 1280, h: 800 } },
    events: [
      { id: crypto.randomUUID(), type: 'page_view', ts: now, page: '/checkout' },
      { id: crypto.randomUUID(), type: 'signal', ts: now, page: '/checkout', signal: 'rage_click', selector: '#pay', label: 'Pay now', x: 500, y: 500 },
    ],
  });
  process.stdout.write(`
Friction is running at ${creds.base_url}  (${created ? 'new demo tenant created' : 'existing demo tenant'})
  credentials: ${infra.config.FRICTION_DATA_DIR}/credentials.json
  org_id:          ${creds.org_id}
  site_id:         ${creds.site_id}
  publishable_key: ${creds.publishable_key}
  secret_key:      ${creds.secret_key}
  owner:           ${creds.owner.email}  password ${creds.owner.password}
  owner token:     ${creds.owner.token}

Send a batch:
  curl -s -X POST ${creds.base_url}/v1/ingest -H 'Authorization: Bearer ${creds.publishable_key}' -H 'Content-Type: application/json' -d '${batch}'
Read scores:
  curl -s '${creds.base_url}/v1/query/scores?site_id=${creds.site_id}' -H 'Authorization: Bearer ${creds.secret_key}'
List alert rules as the owner:
  curl -s '${creds.base_url}/v1/manage/alert-rules?site_id=${creds.site_id}' -H 'Authorization: Bearer ${creds.owner.token}'

`);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command === 'deploy') {
    const { runDeployCommand } = await import('./deploy-cli.ts');
    process.exitCode = await runDeployCommand(rest);
    return;
  }
  if (command === 'bench') {
    const { runBenchCommand } = await import('./bench/index.ts');
    return runBenchCommand(rest);
  }
  const config = loadConfig();
  switch (command) {
    case 'start':
      return runRoles(config, ['ingest', 'api', 'processor', 'dispatcher'], 'start');
    case 'ingest':
    case 'api':
    case 'processor':
    case 'dispatcher':
      return runRoles(config, [command], command);
    case 'migrate': {
      const log = createLogger(config.LOG_LEVEL, { role: 'migrate' });
      const db = await openDatabase({ url: config.DATABASE_URL, dataDir: config.FRICTION_DATA_DIR });
      const applied = await migrateToLatest(db.db, log);
      process.stdout.write(`migrations applied: ${applied.length ? applied.join(', ') : 'none (up to date)'}\n`);
      await db.close();
      return;
    }
    case 'bootstrap': {
      const log = createLogger(config.LOG_LEVEL, { role: 'bootstrap' });
      const infra = await openInfra(config, log, { migrate: false });
      try {
        printCredentials(infra, await ensureDemoCredentials(infra, config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`));
      } finally {
        await closeInfra(infra);
      }
      return;
    }
    case 'recompute': {
      const { values } = parseArgs({ args: rest, options: { site: { type: 'string' }, write: { type: 'boolean', default: false } } });
      if (!values.site) throw new ConfigError(['recompute: --site <site id> is required']);
      const log = createLogger(config.LOG_LEVEL, { role: 'recompute' });
      const db = await openDatabase({ url: config.DATABASE_URL, dataDir: config.FRICTION_DATA_DIR });
      try {
        const { recomputeSiteCommand } = await import('../processor/recompute-site.ts');
        const r = await recomputeSiteCommand(db.db, values.site, Date.now(), values.write, log);
        process.stdout.write(`recomputed site ${r.siteId} from ${r.rows} stored rows${r.written ? ' and rewrote its derived rows' : ''}\n`);
        for (const [what, part] of [['pages', r.pages], ['issues', r.issues], ['elements', r.elements]] as const) {
          process.stdout.write(`  ${what}: ${part.differing.length} differing\n`);
          for (const d of part.differing.slice(0, 20)) process.stdout.write(`    ${d}\n`);
        }
        if (!r.written && (r.pages.differing.length + r.issues.differing.length + r.elements.differing.length) > 0) process.exitCode = 3;
      } finally {
        await db.close();
      }
      return;
    }
    case 'demo': {
      const { runDemo } = await import('./demo.ts');
      return runDemo(config, rest);
    }
    default:
      process.stderr.write(`unknown command: ${command}\n\n${USAGE}\n`);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof ConfigError) process.stderr.write(`${err.message}\n`);
  else process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
