import test from 'ava';
import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { ClaimedDelivery } from '../store/deliveries.store.ts';
import { sendDelivery, type ChannelSettings } from './channels.ts';

// Without SMTP_URL an email cannot be sent however often it is retried: given up at once, with the reason in the
// delivery log, instead of eight attempts over a day. (The email branch touches neither the database nor secrets.)
test('an email delivery on a dispatcher without SMTP_URL is abandoned at once, naming the setting', async (t) => {
  const delivery = {
    channel: 'email',
    target: 'owner@shop.example',
    body: JSON.stringify({ subject: 's', text: 't', html: 'h' }),
  } as unknown as ClaimedDelivery;
  const settings = { mailer: null } as unknown as ChannelSettings;
  const r = await sendDelivery(undefined as unknown as Kysely<Database>, delivery, settings, undefined as never, 0);
  t.deepEqual(r, { kind: 'abandon', reason: 'SMTP_URL is not set on the dispatcher: email alerts cannot be sent' });
});
