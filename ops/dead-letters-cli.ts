import { userInfo } from 'node:os';
import type { Config } from '../shared/config.ts';
import { openDatabase } from '../shared/db/connection.ts';
import { listDeadLetters, replayDeadLetters } from '../processor/store/dead-letters.store.ts';

/**
 * `friction dead-letters`: reads and marks rows of `dead_letters` directly in the database. A replay is published by
 * the processor's outbox relay after this commits (at its next poll, within a second), so the command needs the
 * database only. With the embedded database, run it while Friction is stopped (one process owns the data
 * directory); the replayed messages go out when Friction starts.
 */
async function withDatabase<T>(
  config: Config,
  fn: (db: Awaited<ReturnType<typeof openDatabase>>['db']) => Promise<T>,
): Promise<T> {
  const db = await openDatabase({ url: config.DATABASE_URL, dataDir: config.FRICTION_DATA_DIR });
  try {
    return await fn(db.db);
  } finally {
    await db.close();
  }
}

export async function listDeadLettersCommand(
  config: Config,
  o: { limit: number; withReplayed: boolean },
): Promise<void> {
  const rows = await withDatabase(config, (db) => listDeadLetters(db, o));
  if (rows.length === 0) {
    process.stdout.write(o.withReplayed ? 'no dead letters\n' : 'no dead letters waiting for a replay\n');
    return;
  }
  for (const r of rows) {
    const replayed = r.replayedAt ? `  replayed ${r.replayedAt.toISOString()} by ${r.replayedBy}` : '';
    process.stdout.write(
      `${r.id}\t${r.createdAt.toISOString()}\t${r.subject} #${r.streamSeq}\t${r.bytes} bytes\t${r.reason.slice(0, 200)}${replayed}\n`,
    );
  }
}

/** Exit code: 0 when every named dead letter is replayed (now or earlier), 1 when an id names no dead letter. */
export async function replayDeadLettersCommand(
  config: Config,
  o: { ids: number[] | undefined; actor: string | undefined },
): Promise<number> {
  const actor = o.actor ?? process.env.USER ?? userInfo().username;
  return withDatabase(config, async (db) => {
    const replayed = await replayDeadLetters(db, o.ids, actor);
    process.stdout.write(
      replayed.length > 0
        ? `replayed ${replayed.length} dead letter(s): ${replayed.join(', ')} (queued in the outbox; the processor publishes them)\n`
        : 'nothing to replay\n',
    );
    if (!o.ids) return 0;
    const rest = o.ids.filter((id) => !replayed.includes(id));
    if (rest.length === 0) return 0;
    const known = await listDeadLetters(db, { limit: rest.length, withReplayed: true, ids: rest });
    let code = 0;
    for (const id of rest) {
      const row = known.find((r) => r.id === id);
      if (row?.replayedAt)
        process.stdout.write(`${id}: already replayed ${row.replayedAt.toISOString()} by ${row.replayedBy}\n`);
      else {
        process.stderr.write(`friction: dead letter ${id} does not exist\n`);
        code = 1;
      }
    }
    return code;
  });
}
