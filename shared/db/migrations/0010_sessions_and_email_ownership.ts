import { sql, type Kysely } from 'kysely';

/**
 * Sessions that can end, and email ownership. A user token names its session (`sid`); logout and password change
 * end sessions, and every request checks its session is live. `users.email_verified_at` is set once the address
 * was proven (a link mailed to it was followed); pending signups wait, unbound, in `email_verifications` until
 * then, so nobody holds an address they have not proven. Audit summaries that held credentials in URLs are
 * redacted (the audit log never holds a secret).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const ddl = `
    create table user_sessions (
      id uuid primary key,
      user_id uuid not null references users(id) on delete cascade,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      revoked_at timestamptz
    );
    create index user_sessions_live_idx on user_sessions (user_id) where revoked_at is null;
    alter table users add column email_verified_at timestamptz;
    create table email_verifications (
      id uuid primary key,
      email text not null,
      token_hash text not null unique,
      password_hash text not null,
      org_name text not null,
      plan text not null,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      used_at timestamptz
    );
    create index email_verifications_email_idx on email_verifications (email, created_at)
  `;
  for (const statement of ddl
    .split(/;\s*\n/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    await sql.raw(statement).execute(db);
  }
  // Credentials a URL carried (https://user:pass@host) out of every audit summary written before they were refused.
  await sql`
    update audit_log
       set summary = regexp_replace(summary::text, '([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\\s"]*@', '\\1[redacted]@', 'g')::jsonb
     where summary::text ~ '[a-zA-Z][a-zA-Z0-9+.-]*://[^/@\\s"]*@'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('email_verifications').ifExists().execute();
  await sql`alter table users drop column if exists email_verified_at`.execute(db);
  await db.schema.dropTable('user_sessions').ifExists().execute();
}
