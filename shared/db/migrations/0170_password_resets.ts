import { sql, type Kysely } from 'kysely';

/**
 * Password resets (issue 30 N9): a single-use token, stored only as its sha256, with a short life. Mailed by
 * POST /v1/auth/forgot-password, or printed by `friction users reset-password EMAIL` on an instance without SMTP.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table password_resets (
      id uuid primary key,
      user_id uuid not null references users(id) on delete cascade,
      token_hash text not null unique,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    )`.execute(db);
  await sql`create index password_resets_user_idx on password_resets (user_id) where used_at is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('password_resets').ifExists().execute();
}
