import type { Kysely, Selectable, Transaction, Updateable } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import type { WebhookEndpointTable } from '../../../shared/db/tables/delivery.table.ts';

type Db = Kysely<Database> | Transaction<Database>;
export type WebhookRow = Omit<Selectable<WebhookEndpointTable>, 'secret_sealed'>;

const COLUMNS = [
  'id',
  'org_id',
  'site_id',
  'url',
  'description',
  'events',
  'active',
  'created_at',
  'updated_at',
  'deleted_at',
  'consecutive_failures',
  'failing_since',
  'disabled_at',
  'disabled_reason',
] as const;

/** Endpoints not deleted, without their secret. */
const liveWebhooks = (db: Db) => db.selectFrom('webhook_endpoints').select(COLUMNS).where('deleted_at', 'is', null);

/** The org's endpoints (not deleted); `siteId` narrows to one site's, `onlySite` to those bound to it (keys). */
export async function listWebhooks(
  db: Db,
  orgId: string,
  f: { siteId?: string; onlySite?: boolean },
): Promise<WebhookRow[]> {
  let q = liveWebhooks(db).where('org_id', '=', orgId);
  if (f.siteId && f.onlySite) q = q.where('site_id', '=', f.siteId);
  else if (f.siteId) q = q.where((eb) => eb.or([eb('site_id', '=', f.siteId!), eb('site_id', 'is', null)]));
  return q.orderBy('created_at').orderBy('id').execute();
}

export async function findWebhookForUpdate(trx: Transaction<Database>, id: string): Promise<WebhookRow | undefined> {
  return liveWebhooks(trx).where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function insertWebhook(
  trx: Transaction<Database>,
  w: {
    id: string;
    orgId: string;
    siteId: string | null;
    url: string;
    description: string | null;
    events: string[];
    secretSealed: string;
  },
): Promise<WebhookRow> {
  return trx
    .insertInto('webhook_endpoints')
    .values({
      id: w.id,
      org_id: w.orgId,
      site_id: w.siteId,
      url: w.url,
      description: w.description,
      events: w.events,
      active: true,
      secret_sealed: w.secretSealed,
      deleted_at: null,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function updateWebhook(
  trx: Transaction<Database>,
  id: string,
  set: Updateable<WebhookEndpointTable>,
): Promise<WebhookRow> {
  return trx
    .updateTable('webhook_endpoints')
    .set(set)
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}
