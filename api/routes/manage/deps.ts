import type { Kysely } from 'kysely';
import type { KeyResolver } from '../../../shared/auth/key-resolver.ts';
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
  /** Key caches of this process (ingest's, the API's): a revoked key is dropped from each at once. */
  keyCaches: readonly KeyResolver[];
  /** scrypt cost of new password hashes. */
  passwordCost: number;
  jwtTtlSec: number;
  now: () => Date;
}
