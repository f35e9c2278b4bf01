/**
 * Test-only: services in Docker through testcontainers, for a laptop without local PostgreSQL, NATS or Redis.
 * `npm test` uses this only for a service whose TEST_*_URL is unset, whose default local port does not answer,
 * and only when a Docker engine answers; CI machines run the real services and never reach this code.
 */
import { execFile } from 'node:child_process';

export type ServiceName = 'postgres' | 'nats' | 'redis';

/** True when `docker info` answers within a few seconds. */
export function dockerAnswers(): Promise<boolean> {
  return new Promise((resolve) => {
    execFile('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: 5000 }, (err, stdout) =>
      resolve(!err && stdout.trim().length > 0),
    );
  });
}

/** Starts one container per service and returns their URLs and a function that removes them. */
export async function startServiceContainers(
  services: readonly ServiceName[],
): Promise<{ urls: Partial<Record<ServiceName, string>>; stop: () => Promise<void> }> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const started: { stop(): Promise<unknown> }[] = [];
  const urls: Partial<Record<ServiceName, string>> = {};
  for (const s of services) {
    if (s === 'postgres') {
      // The TimescaleDB image, so the hypertable path also runs against a real server here.
      const c = await new GenericContainer('timescale/timescaledb:latest-pg16')
        .withEnvironment({ POSTGRES_PASSWORD: 'postgres' })
        .withCommand(['postgres', '-c', 'fsync=off'])
        .withExposedPorts(5432)
        .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
        .start();
      started.push(c);
      urls.postgres = `postgres://postgres:postgres@${c.getHost()}:${c.getMappedPort(5432)}/postgres`;
    } else if (s === 'nats') {
      const c = await new GenericContainer('nats:2.10-alpine')
        .withCommand(['-js'])
        .withExposedPorts(4222)
        .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
        .start();
      started.push(c);
      urls.nats = `nats://${c.getHost()}:${c.getMappedPort(4222)}`;
    } else {
      const c = await new GenericContainer('redis:7-alpine')
        .withExposedPorts(6379)
        .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
        .start();
      started.push(c);
      urls.redis = `redis://${c.getHost()}:${c.getMappedPort(6379)}`;
    }
  }
  return { urls, stop: async () => void (await Promise.all(started.map((c) => c.stop().catch(() => {})))) };
}
