import { sql, type Kysely } from 'kysely';

/**
 * Frozen: who may act. Users (email stored lowercased, unique), their memberships in orgs with one of four
 * roles, pending invitations (only a hash of the invite token is kept), the instance's generated secret (used
 * when FRICTION_SECRET is unset), custom limits for Enterprise orgs, and soft deletion of sites (a deleted
 * site's sessions still count toward the month, so deleting and re-creating a site cannot reset a quota).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const ddl = `
    alter table orgs add column site_limit integer;
    alter table orgs add column session_limit integer;
    alter table sites add column deleted_at timestamptz;
    create table users (
      id uuid primary key,
      email text not null unique,
      password_hash text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create table memberships (
      id uuid primary key,
      org_id uuid not null references orgs(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      role text not null check (role in ('owner', 'admin', 'member', 'viewer')),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (org_id, user_id)
    );
    create index memberships_user_idx on memberships (user_id, created_at);
    create table invitations (
      id uuid primary key,
      org_id uuid not null references orgs(id) on delete cascade,
      email text not null,
      role text not null check (role in ('admin', 'member', 'viewer')),
      token_hash text not null unique,
      invited_by uuid references users(id) on delete set null,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      accepted_at timestamptz,
      revoked_at timestamptz
    );
    create unique index invitations_pending_idx on invitations (org_id, email) where accepted_at is null and revoked_at is null;
    create table instance_secrets (
      name text primary key,
      value text not null,
      created_at timestamptz not null default now()
    )
  `;
  for (const statement of ddl
    .split(/;\s*\n/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    await sql.raw(statement).execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['instance_secrets', 'invitations', 'memberships', 'users'])
    await db.schema.dropTable(t).ifExists().execute();
  await sql`alter table sites drop column if exists deleted_at`.execute(db);
  await sql`alter table orgs drop column if exists session_limit`.execute(db);
  await sql`alter table orgs drop column if exists site_limit`.execute(db);
}
