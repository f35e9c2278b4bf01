import type Router from '@koa/router';
import { InstanceKeys } from '../../shared/auth/instance-keys.ts';
import type { ReadinessCheck } from '../../shared/http/ops-routes.ts';
import { databaseReady, type Infra } from '../../shared/infra.ts';
import { createMailer } from '../../shared/mail/mailer.ts';
import { Dispatcher } from './dispatcher.ts';
import { DegradationMonitor } from './degradation-monitor.ts';

/** The dispatcher role (`friction dispatcher`, also inside `friction start`): webhooks and alert channels. */
export function dispatcherRole(infra: Infra, opts: { now?: () => number; random?: () => number } = {}) {
  return {
    async start(): Promise<{
      running: { stop(): Promise<void>; dispatcher: Dispatcher; monitor: DegradationMonitor };
      http: { routers: Router[]; checks: ReadinessCheck[] };
    }> {
      const { config, log } = infra;
      const dispatcher = new Dispatcher({
        db: infra.database.db,
        bus: infra.bus,
        topology: infra.topology,
        log,
        now: opts.now,
        random: opts.random,
        // The NOTIFY consumer redelivers what a killed dispatcher had fetched after the same wait as the processor's.
        ackWaitMs: config.PROCESSOR_ACK_WAIT_MS,
        // The embedded database is one process's (its directory is locked): this dispatcher is the only one.
        sole: infra.database.kind === 'pglite',
        channels: {
          outbound: { allowPrivateNetworks: config.OUTBOUND_ALLOW_PRIVATE_NETWORKS },
          slackWebhookBaseUrl: config.SLACK_WEBHOOK_BASE_URL,
          slackApiBaseUrl: config.SLACK_API_BASE_URL,
          pagerDutyEventsUrl: config.PAGERDUTY_EVENTS_URL,
          publicBaseUrl: config.PUBLIC_BASE_URL,
          mailer: config.SMTP_URL ? createMailer({ smtpUrl: config.SMTP_URL, from: config.SMTP_FROM }) : null,
          instanceKeys: new InstanceKeys(infra.database.db, config),
        },
      });
      await dispatcher.start();
      const monitor = new DegradationMonitor({
        db: infra.database.db,
        bus: infra.bus,
        topology: infra.topology,
        log,
        now: opts.now,
        lagBound: { messages: config.PROCESSOR_LAG_DEGRADED_MESSAGES, seconds: config.PROCESSOR_LAG_DEGRADED_SECONDS },
      });
      monitor.start();
      return {
        running: { dispatcher, monitor, stop: async () => (await monitor.stop(), await dispatcher.stop()) },
        http: {
          routers: [],
          checks: [
            ['database', () => databaseReady(infra)],
            ['bus', () => infra.bus.healthy()],
          ],
        },
      };
    },
  };
}
