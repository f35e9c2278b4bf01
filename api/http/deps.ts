import type { Kysely } from 'kysely';
import type { InstanceKeys } from '../../shared/auth/instance-keys.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import type { Topology } from '../../shared/contracts/subjects.ts';
import type { Database } from '../../shared/db/database.ts';
import type { Mailer } from '../../shared/mail/mailer.ts';
import type { OutboundPolicy } from '../../shared/net/outbound.ts';
import type { Logger } from '../../shared/logger.ts';

/** What the management routes need: built once by api/main.ts. */
export interface ManageDeps {
  db: Kysely<Database>;
  bus: Bus;
  topology: Topology;
  instanceKeys: InstanceKeys;
  /**
   * Drops keys from this process's caches and announces them to every other process, which re-read them on next
   * use: after a revocation, or a change of what a key record carries (its site paused or resumed).
   */
  forgetKeys(hashes: readonly string[]): Promise<void>;
  /** Drops a site's SDK configs from this process's cache and tells every ingest replica to do the same. */
  sdkConfigChanged(siteId: string): Promise<void>;
  /** scrypt cost of new password hashes. */
  passwordCost: number;
  jwtTtlSec: number;
  /** Longest life of a session (SESSION_MAX_SECONDS). */
  sessionMaxSec: number;
  /** Account mail (verification, invitations); null without SMTP_URL: accounts are then unverified. */
  mailer: Mailer | null;
  /** Where this instance is reached (PUBLIC_BASE_URL), for the instructions in mail. */
  publicBaseUrl: string;
  /** What stored outbound URLs (webhooks, site URLs) may point to: checked at create and update time. */
  outbound: OutboundPolicy;
  now: () => Date;
  /** For work done after the answer (a reset mail is sent after its 202, so timing reveals no account). */
  log: Logger;
}
