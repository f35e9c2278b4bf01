#!/usr/bin/env node
import { loadConfig, ConfigError, type Config } from '../shared/config.ts';
import { createLogger, type Logger } from '../shared/logger.ts';
import { serverModeProblem, type InfraCommand } from '../shared/deployment-mode.ts';
import type { Server } from 'node:http';
// Types only at the top: the modules themselves are imported when a command needs them, so `--help`, a bad
// option or a port in use answer at once instead of after loading every role.
import type { Infra } from '../shared/infra.ts';
import type { RoleHttp } from './server.ts';
import type { ensureDemoCredentials } from './bootstrap.ts';

/** Same class the infra module throws; defined there, re-exported lazily would lose instanceof: compare by name. */
const isStartupError = (err: unknown): err is Error => err instanceof Error && err.name === 'StartupError';
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import { workerCount } from './processor-workers.ts';

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

const startupError = (message: string): Error => Object.assign(new Error(message), { name: 'StartupError' });

/**
 * Opens the port before any slow start-up work: a port in use fails at once, and until the roles are ready the
 * port answers /healthz and 503 `unavailable` (Retry-After) to everything else.
 */
async function listenBeforeStart(config: Config, name: string, log: Logger) {
  const [{ listenEarly }, { connectionLimits }] = await Promise.all([
    import('./early-listener.ts'),
    import('../shared/http/connection-guard.ts'),
  ]);
  const port = config.PORT;
  const host = config.HOST;
  return listenEarly(port, host, name, log, connectionLimits(config)).catch((err: NodeJS.ErrnoException) => {
    const what =
      err.code === 'EADDRINUSE'
        ? 'is in use'
        : err.code === 'EACCES'
          ? 'needs privileges'
          : `cannot be bound (${err.code})`;
    throw startupError(
      `port ${port} on ${host} ${what} (PORT): stop the other process or set PORT to a free port, e.g. PORT=8090 npm start`,
    );
  });
}

/** Refuses, before anything opens, a server deployment's process that would fall back to an embedded part. */
function requireServerSettings(config: Config, command: InfraCommand): Config {
  const problem = serverModeProblem(config, command);
  if (problem) throw startupError(problem);
  return config;
}

async function runRoles(
  config: Config,
  roles: ReadonlyArray<'ingest' | 'api' | 'processor' | 'dispatcher'>,
  name: 'start' | 'ingest' | 'api' | 'processor' | 'dispatcher',
): Promise<void> {
  requireServerSettings(config, name);
  const log = createLogger(config.LOG_LEVEL, { role: name });
  const t0 = performance.now();
  const early = await listenBeforeStart(config, name, log);
  log.info(
    { step: 'open the port', ms: Math.round(performance.now() - t0) },
    'start-up: port open, answering 503 until ready',
  );
  const [
    { openInfra, closeInfra, timed, exitWhenDatabaseLost },
    { ingestRole },
    { apiRole },
    { processorRole },
    { dispatcherRole },
    { serveRoles, closeServer },
    { ensureDemoCredentials },
  ] = await Promise.all([
    import('../shared/infra.ts'),
    import('../ingest/main.ts'),
    import('../api/main.ts'),
    import('../processor/main.ts'),
    import('../processor/dispatcher/main.ts'),
    import('./server.ts'),
    import('./bootstrap.ts'),
  ]);
  log.info({ step: 'load modules', ms: Math.round(performance.now() - t0) }, 'start-up: modules loaded');
  // Single-process mode owns its database, so it migrates at start; split roles expect `friction migrate`.
  const infra = await openInfra(config, log, { migrate: name === 'start' });
  exitWhenDatabaseLost(infra.database, log);
  const http: RoleHttp[] = [];
  if (roles.includes('ingest')) http.push(ingestRole(infra, { sharesLoopWithProcessor: roles.includes('processor') }));
  const api = roles.includes('api') ? apiRole(infra) : undefined;
  if (api) http.push(api);
  const processor = roles.includes('processor')
    ? await timed(log, 'start the processor (rebuild its state)', () => processorRole(infra).start())
    : undefined;
  if (processor) http.push(processor.http);
  const dispatcher = roles.includes('dispatcher') ? await dispatcherRole(infra).start() : undefined;
  if (dispatcher) http.push(dispatcher.http);
  // credentials.json exists before the roles answer, so whoever waits for /readyz can read it at once.
  const earlyAddr = early.server.address();
  const plannedBaseUrl =
    config.PUBLIC_BASE_URL ??
    `http://localhost:${typeof earlyAddr === 'object' && earlyAddr ? earlyAddr.port : config.PORT}`;
  const demo =
    name === 'start' ? await timed(log, 'demo tenant', () => ensureDemoCredentials(infra, plannedBaseUrl)) : undefined;
  const server: Server = await serveRoles(name, http, log, config.PORT, config.HOST, {
    trustedProxies: config.TRUSTED_PROXIES,
    metricsToken: config.METRICS_TOKEN,
    early,
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.PORT;
  log.info({ port, roles }, 'listening');
  if (demo) printCredentials(infra, demo);
  processor?.running.done.catch((err) => {
    log.fatal({ err }, 'processor loop died');
    process.exit(1);
  });
  onShutdown(log, config.SHUTDOWN_TIMEOUT_MS, async () => {
    await closeServer(server);
    await api?.stop();
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
      {
        id: crypto.randomUUID(),
        type: 'signal',
        ts: now,
        page: '/checkout',
        signal: 'rage_click',
        selector: '#pay',
        label: 'Pay now',
        x: 500,
        y: 500,
      },
    ],
  });
  process.stdout.write(`
Friction is running at ${creds.base_url}  (${created ? 'new demo tenant created' : 'existing demo tenant'})
  dashboard:       ${creds.base_url}/  (sign in as the owner below)
  API reference:   ${creds.base_url}/docs  (paste the secret key or the owner token under Authentication)
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

/** Option parsers: a bad value is one line naming the option, and exit 1, before anything starts. */
const wholeNumber =
  (min: number, max: number) =>
  (v: string): number => {
    if (!/^\d+$/.test(v) || +v < min || +v > max)
      throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return +v;
  };
const httpUrl = (v: string): string => {
  if (!/^https?:\/\/[^/\s]+/.test(v))
    throw new InvalidArgumentError('must be an http(s) URL such as http://localhost:8080');
  return v.replace(/\/+$/, '');
};
const publishableKey = (v: string): string => {
  if (!/^svc_pub_\w+$/.test(v))
    throw new InvalidArgumentError(
      'must be a publishable key (svc_pub_…), e.g. publishable_key in .friction/credentials.json',
    );
  return v;
};
const environmentArg = (v: string): 'production' | 'staging' => {
  if (v !== 'production' && v !== 'staging') throw new InvalidArgumentError('must be production or staging');
  return v;
};
const uuidArg = (v: string): string => {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v))
    throw new InvalidArgumentError('must be a site id (uuid)');
  return v.toLowerCase();
};

/** The whole CLI: one command per role or task, each with its own --help and validated options. */
export function cliProgram(): Command {
  const program = new Command('friction')
    .description(
      'Friction: open-source UX friction analytics. Configuration is read from the environment (docs/configuration.md).',
    )
    .enablePositionalOptions()
    .version(
      (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version,
      '-v, --version',
      'print the version',
    )
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ outputError: (str, write) => write(`friction: ${str.replace(/^error: /, '')}`) });

  program
    .command('start')
    .description('every role in one process on PORT (embedded database, bus and limiter unless configured)')
    .action(() => runRoles(loadConfig(), ['ingest', 'api', 'processor', 'dispatcher'], 'start'));
  for (const role of ['ingest', 'api', 'dispatcher'] as const) {
    program
      .command(role)
      .description(`the ${role} role only, on PORT`)
      .action(() => runRoles(loadConfig(), [role], role));
  }
  program
    .command('processor')
    .description('the processor role only, on PORT')
    .option(
      '--workers <n|auto>',
      'run N processor processes sharing the partitions by lease (auto: cores - 1); worker i serves PORT + i',
      (v: string) => {
        try {
          return workerCount(v);
        } catch (err) {
          throw new InvalidArgumentError((err as Error).message);
        }
      },
      1,
    )
    .action(async ({ workers: n }: { workers: number }) => {
      const { workersProblem, runProcessorWorkers } = await import('./processor-workers.ts');
      const config = loadConfig();
      if (n === 1) return runRoles(config, ['processor'], 'processor');
      const problem = workersProblem(config, n);
      if (problem) throw startupError(problem);
      await runProcessorWorkers(config, n, createLogger(config.LOG_LEVEL, { role: 'processor' }));
    });

  program
    .command('migrate')
    .description('apply database migrations (retries the connection for MIGRATE_CONNECT_TIMEOUT_MS)')
    .action(async () => {
      const config = requireServerSettings(loadConfig(), 'migrate');
      const { openDatabase } = await import('../shared/db/connection.ts');
      const { migrateToLatest } = await import('../shared/db/migrator.ts');
      const { waitForDatabase } = await import('../shared/infra.ts');
      const log = createLogger(config.LOG_LEVEL, { role: 'migrate' });
      const db = await openDatabase({ url: config.DATABASE_URL, dataDir: config.FRICTION_DATA_DIR });
      try {
        if (config.DATABASE_URL)
          await waitForDatabase(db.db, config.DATABASE_URL, config.MIGRATE_CONNECT_TIMEOUT_MS, log);
        const applied = await migrateToLatest(db.db, log);
        process.stdout.write(`migrations applied: ${applied.length ? applied.join(', ') : 'none (up to date)'}\n`);
      } finally {
        await db.close();
      }
    });

  program
    .command('bootstrap')
    .description('create the demo org, site and keys if missing, and print them (split deployments)')
    .action(async () => {
      const config = requireServerSettings(loadConfig(), 'bootstrap');
      const { openInfra, closeInfra } = await import('../shared/infra.ts');
      const { ensureDemoCredentials } = await import('./bootstrap.ts');
      const infra = await openInfra(config, createLogger(config.LOG_LEVEL, { role: 'bootstrap' }), { migrate: false });
      try {
        printCredentials(
          infra,
          await ensureDemoCredentials(infra, config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`),
        );
      } finally {
        await closeInfra(infra);
      }
    });

  program
    .command('recompute')
    .description(
      "recompute a site's scores, issues and elements from its raw rows; report (and rewrite) differences; exit 3 when differences were found and not written",
    )
    .requiredOption('--site <uuid>', 'the site id', uuidArg)
    .option(
      '--environment <name>',
      'production or staging: the environment whose results are recomputed',
      environmentArg,
      'production' as const,
    )
    .option('--write', "rewrite the site's derived rows", false)
    .action(async (o: { site: string; environment: 'production' | 'staging'; write: boolean }) => {
      const config = requireServerSettings(loadConfig(), 'recompute');
      const log = createLogger(config.LOG_LEVEL, { role: 'recompute' });
      const { openDatabase } = await import('../shared/db/connection.ts');
      const db = await openDatabase({ url: config.DATABASE_URL, dataDir: config.FRICTION_DATA_DIR });
      try {
        const { recomputeSiteCommand } = await import('../processor/recompute-site.ts');
        const r = await recomputeSiteCommand(db.db, o.site, Date.now(), o.write, log, o.environment);
        process.stdout.write(
          `recomputed site ${r.siteId} (${r.environment}) from ${r.rows} stored rows${r.written ? ' and rewrote its derived rows' : ''}\n`,
        );
        for (const [what, part] of [
          ['pages', r.pages],
          ['issues', r.issues],
          ['elements', r.elements],
        ] as const) {
          process.stdout.write(`  ${what}: ${part.differing.length} differing\n`);
          for (const d of part.differing.slice(0, 20)) process.stdout.write(`    ${d}\n`);
        }
        if (!r.written && r.pages.differing.length + r.issues.differing.length + r.elements.differing.length > 0)
          process.exitCode = 3;
      } finally {
        await db.close();
      }
    });

  const users = program.command('users').description('operator commands for accounts');
  users
    .command('reset-password')
    .description('print a one-time password reset token (valid 30 minutes) for an account: for instances without SMTP')
    .argument('<email>', "the account's address")
    .action(async (email: string) => {
      const config = loadConfig();
      const { openDatabase } = await import('../shared/db/connection.ts');
      const { findUserByEmail } = await import('../shared/db/queries/accounts.queries.ts');
      const { issuePasswordReset } = await import('../shared/auth/password-reset.ts');
      const db = await openDatabase({ url: config.DATABASE_URL, dataDir: config.FRICTION_DATA_DIR });
      try {
        const user = await findUserByEmail(db.db, email.trim().toLowerCase());
        if (!user) throw startupError(`no account has the address ${email}`);
        const { token, expiresAt } = await issuePasswordReset(db.db, user.id, new Date());
        const base = config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`;
        process.stdout.write(
          `Password reset for ${user.email}, valid once until ${expiresAt.toISOString()}. Hand this to its owner only:\n\n` +
            `  curl -X POST ${base}/v1/auth/reset-password -H 'content-type: application/json' -d '{"token":"${token}","new_password":"…"}'\n`,
        );
      } finally {
        await db.close();
      }
    });

  const deadLetters = program
    .command('dead-letters')
    .description('list the messages the processor gave up on, or put them back on their subjects');
  deadLetters
    .command('list')
    .description('the newest dead letters not yet replayed (id, when, subject, reason)')
    .option('--limit <n>', 'at most this many', wholeNumber(1, 10_000), 50)
    .option('--with-replayed', 'include the ones already replayed (when and by whom)', false)
    .action(async (o: { limit: number; withReplayed: boolean }) => {
      const { listDeadLettersCommand } = await import('./dead-letters-cli.ts');
      await listDeadLettersCommand(loadConfig(), o);
    });
  deadLetters
    .command('replay')
    .description('queue dead letters for publishing again on their subjects (once each; recorded with who ran it)')
    .option('--id <n...>', 'the dead letters to replay (ids from `list`)')
    .option('--all', 'every dead letter not yet replayed', false)
    .option('--actor <name>', 'who is replaying, recorded on each row (default: the OS user)')
    .action(async (o: { id?: string[]; all: boolean; actor?: string }) => {
      const ids = o.id?.map((v) => wholeNumber(1, Number.MAX_SAFE_INTEGER)(v));
      if ((ids === undefined) === !o.all) throw new InvalidArgumentError('give either --id <n...> or --all');
      const { replayDeadLettersCommand } = await import('./dead-letters-cli.ts');
      process.exitCode = await replayDeadLettersCommand(loadConfig(), { ids, actor: o.actor });
    });

  program
    .command('demo')
    .description(
      'send realistic synthetic SDK traffic to a running Friction (defaults from .friction/credentials.json), or with --events write 30 days of realistic data straight into the database',
    )
    .option('--sessions <n>', 'visitor sessions to send', wholeNumber(1, 100_000), 300)
    .option('--base-url <url>', 'the Friction (ingest) base URL; default base_url of credentials.json', httpUrl)
    .option('--key <svc_pub_…>', 'publishable key; default publishable_key of credentials.json', publishableKey)
    .option(
      '--events <n>',
      'write this many events straight into the database (COPY), with their sessions, signals, scores, issues and deploys',
      wholeNumber(1, 100_000_000),
    )
    .option('--days <n>', 'with --events: days of data, ending now', wholeNumber(1, 90), 30)
    .option('--pages <n>', 'with --events: distinct pages (a long tail)', wholeNumber(1, 100_000), 2000)
    .option('--site <uuid>', 'with --events: the site to write for; default a new organization and site')
    .option('--seed <n>', 'with --events: seed of the generator', wholeNumber(0, 2 ** 31), 1)
    .option(
      '--threads <n>',
      'with --events on PostgreSQL: generator threads, each with its own COPY connections',
      wholeNumber(1, 32),
      4,
    )
    .action(
      async (o: {
        sessions: number;
        baseUrl?: string;
        key?: string;
        events?: number;
        days: number;
        pages: number;
        site?: string;
        seed: number;
        threads: number;
      }) => {
        if (o.events !== undefined) {
          const config = loadConfig();
          const { runDemoData } = await import('./demo-data.ts');
          await runDemoData(
            config,
            { events: o.events, days: o.days, pages: o.pages, site: o.site, seed: o.seed, threads: o.threads },
            createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, { role: 'demo' }),
          );
          return;
        }
        const { runDemo } = await import('./demo.ts');
        await runDemo(loadConfig(), o);
      },
    );

  // The @friction/cli commands (cli/commands.ts), under their own option parsers: every argument after the name is theirs.
  const clientCommands: Record<string, [description: string, args: string]> = {
    deploy: [
      'record a deploy / gate CI on its verdict (exit 0 PASS, 1 FAIL, 2 errors); friction deploy --help',
      'record|check and their options',
    ],
    mcp: [
      "MCP over stdio for a desktop assistant, forwarding to a running Friction's /v1/mcp (logs on stderr only)",
      'options: --url (env FRICTION_URL), --key: an MCP key or a secret key with query:read (env FRICTION_KEY)',
    ],
    doctor: [
      'check a running Friction: it answers, its version, the key and the site (exit 0 ok, 1 a check failed, 2 usage)',
      'options: --base-url, --key, --site (friction doctor --help)',
    ],
  };
  for (const [name, [description, args]] of Object.entries(clientCommands))
    program
      .command(name)
      .description(description)
      .argument('[args...]', args)
      .allowUnknownOption()
      .helpOption(false)
      .action(async (argv: string[]) => {
        const [{ COMMANDS }, { defaultIo }] = await Promise.all([
          import('../cli/commands.ts'),
          import('./deploy-cli.ts'),
        ]);
        process.exitCode = await COMMANDS[name]!.run(argv, defaultIo);
      });

  program
    .command('bench')
    .description(
      'run a benchmark: pipeline, engine, processor, embedded, sdk, verify, alerts, mcp, query or fuzz (options after the name go to it)',
    )
    .argument('<name>', 'pipeline, engine, processor, embedded, sdk, verify, alerts, mcp, query or fuzz')
    .argument('[options...]')
    .allowUnknownOption()
    .action(async (name: string, rest: string[]) => {
      const { runBenchCommand } = await import('./bench/index.ts');
      await runBenchCommand([name, ...rest]);
    });
  return program;
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  cliProgram()
    .parseAsync(process.argv)
    .catch((err) => {
      if (err instanceof ConfigError)
        process.stderr.write(
          `friction: invalid configuration: ${err.problems.join('; ')} (see docs/configuration.md)\n`,
        );
      else if (isStartupError(err)) process.stderr.write(`friction: ${err.message}\n`);
      else process.stderr.write(`${err?.stack ?? err}\n`);
      process.exit(1);
    });
}
