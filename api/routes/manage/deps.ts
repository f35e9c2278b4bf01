import type { Kysely } from 'kysely';
import type { InstanceKeys } from '../../../shared/auth/instance-keys.ts';
import type { Bus } from '../../../shared/bus/bus.ts';
import type { Topology } from '../../../shared/contracts/subjects.ts';
import type { Database } from '../../../shared/db/database.ts';

/** What the management routes need: built once by api/main.ts. */
export interface ManageDeps {
  db: Kysely<Database>;
  bus: Bus;
  topology: Topology;
  instanceKeys: InstanceKeys;
  /** Drops revoked keys from this process's caches and announces them to every other process. */
  keysRevoked(hashes: readonly string[]): Promise<void>;
  /** scrypt cost of new password hashes. */
  passwordCost: number;
  jwtTtlSec: number;
  now: () => Date;
}
