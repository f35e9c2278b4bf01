import type { Kysely } from 'kysely';
import type { InstanceKeys } from '../../../shared/auth/instance-keys.ts';
import type { Bus } from '../../../shared/bus/bus.ts';
import type { Topology } from '../../../shared/contracts/subjects.ts';
import type { Database } from '../../../shared/db/database.ts';
import type { OutboundPolicy } from '../../../shared/net/outbound.ts';

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
  /** scrypt cost of new password hashes. */
  passwordCost: number;
  jwtTtlSec: number;
  /** What stored outbound URLs (webhooks, site URLs) may point to: checked at create and update time. */
  outbound: OutboundPolicy;
  now: () => Date;
}
