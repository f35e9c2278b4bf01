import type { Config } from './config.ts';

/** The commands that open infrastructure, and what each needs from a server deployment. */
const NEEDS = {
  start: ['DATABASE_URL', 'NATS_URL', 'REDIS_URL'],
  ingest: ['DATABASE_URL', 'NATS_URL', 'REDIS_URL'],
  api: ['DATABASE_URL', 'NATS_URL', 'REDIS_URL'],
  processor: ['DATABASE_URL', 'NATS_URL'],
  dispatcher: ['DATABASE_URL', 'NATS_URL'],
  migrate: ['DATABASE_URL'],
  bootstrap: ['DATABASE_URL'],
  recompute: ['DATABASE_URL'],
} as const satisfies Record<string, ReadonlyArray<'DATABASE_URL' | 'NATS_URL' | 'REDIS_URL'>>;
export type InfraCommand = keyof typeof NEEDS;

/** The split roles only make sense beside other processes: they are server mode whatever the environment says. */
const SPLIT_ROLES: ReadonlySet<InfraCommand> = new Set(['ingest', 'api', 'processor', 'dispatcher']);

/**
 * Why a command must not start, or null. A process of a server deployment that fell back to an embedded part
 * would look healthy and be wrong: ingest accepting into an in-process bus no processor reads, a limiter per
 * replica, a private database. So server mode (FRICTION_MODE=server, DATABASE_URL or NATS_URL set, or a split
 * role) names every missing setting instead.
 */
export function serverModeProblem(
  config: Pick<Config, 'FRICTION_MODE' | 'DATABASE_URL' | 'NATS_URL' | 'REDIS_URL'>,
  command: InfraCommand,
): string | null {
  const why = SPLIT_ROLES.has(command)
    ? `\`friction ${command}\` is one role of a split deployment`
    : config.FRICTION_MODE === 'server'
      ? 'FRICTION_MODE=server'
      : config.DATABASE_URL
        ? 'DATABASE_URL is set, so this is a server deployment'
        : config.NATS_URL
          ? 'NATS_URL is set, so this is a server deployment'
          : null;
  if (!why) return null;
  const missing = NEEDS[command].filter((name) => !config[name]);
  if (!missing.length) return null;
  const hint =
    SPLIT_ROLES.has(command) || command === 'start'
      ? '; `friction start` with none of them set runs every role in one process on embedded parts'
      : '';
  return `${why} and needs ${missing.join(', ')}: set ${missing.length > 1 ? 'them' : 'it'} (see docs/configuration.md)${hint}`;
}
