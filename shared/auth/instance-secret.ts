import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { deleteStoredInstanceSecret, findStoredInstanceSecret } from '../db/queries/instance-secrets.queries.ts';

/** Where a generated instance secret lives: in FRICTION_DATA_DIR, never in the database. */
export const SECRET_FILE = 'instance-secret';

export type SecretSource = 'env' | 'file' | 'generated' | 'moved-from-database';

export interface InstanceSecret {
  value: string;
  source: SecretSource;
  /** Why the operator should act, loudly, at start (empty: nothing to say). */
  warnings: string[];
}

/**
 * The instance secret: FRICTION_SECRET when set; else the file `<dataDir>/instance-secret` (mode 0600), generated
 * on first start. A secret an older version kept in the database (table instance_secrets) is moved into the file
 * and deleted from the database, so tokens and sealed secrets made under it stay valid while a database dump
 * alone no longer forges an owner token or unseals webhook and integration secrets.
 */
export async function loadInstanceSecret(
  db: Kysely<Database>,
  o: { configured: string | undefined; dataDir: string; externalDatabase: boolean },
): Promise<InstanceSecret> {
  const stored = await findStoredInstanceSecret(db);
  if (o.configured) {
    const warnings: string[] = [];
    const weak = secretWeakness(o.configured);
    if (weak) warnings.push(`FRICTION_SECRET is weak (${weak}): generate one with \`openssl rand -hex 32\``);
    if (stored !== null) {
      await deleteStoredInstanceSecret(db);
      warnings.push(
        'deleted the instance secret an older version kept in the database (FRICTION_SECRET is the secret in use)',
      );
    }
    return { value: o.configured, source: 'env', warnings };
  }
  const file = join(o.dataDir, SECRET_FILE);
  const warnings = o.externalDatabase
    ? [
        `FRICTION_SECRET is unset: using ${file}. Every process sharing this database must have the same secret: set FRICTION_SECRET on all of them (docker-compose does)`,
      ]
    : [];
  const existing = await readSecretFile(file, warnings);
  if (existing !== null) {
    if (stored !== null && stored !== existing)
      warnings.push(`the database still holds another instance secret than ${file}: it was deleted`);
    if (stored !== null) await deleteStoredInstanceSecret(db);
    return { value: existing, source: 'file', warnings };
  }
  const candidate = stored ?? randomBytes(32).toString('base64url');
  const value = await createSecretFile(o.dataDir, file, candidate);
  // NOTE: delete only after the file holds it, so a crash in between loses nothing.
  if (stored !== null && value === stored) await deleteStoredInstanceSecret(db);
  return { value, source: stored !== null && value === stored ? 'moved-from-database' : 'generated', warnings };
}

async function readSecretFile(file: string, warnings: string[]): Promise<string | null> {
  try {
    const st = await stat(file);
    if ((st.mode & 0o077) !== 0) {
      await chmod(file, 0o600);
      warnings.push(`${file} was readable by other users; its mode is now 0600`);
    }
    const value = (await readFile(file, 'utf8')).trim();
    if (value.length < 32)
      throw new Error(
        `${file} holds fewer than 32 characters: restore it from a backup or delete it (every session ends, sealed secrets must be re-entered)`,
      );
    return value;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Writes `candidate` to `file` with mode 0600 unless another process got there first: written to a private temp
 * file, then hard-linked into place (link fails on an existing name), so concurrent first starts agree on one value.
 */
async function createSecretFile(dir: string, file: string, candidate: string): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  await writeFile(tmp, `${candidate}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(tmp, file);
    return candidate;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return (await readFile(file, 'utf8')).trim();
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

const PLACEHOLDERS = /change.?me|changeit|secret|password|example|friction|default|test/i;

/**
 * Why a configured secret is weak, or null. Estimates entropy from the character classes used (a 64-character
 * hex string: 256 bits; the same character repeated: almost none) and refuses placeholders.
 */
export function secretWeakness(secret: string): string | null {
  if (PLACEHOLDERS.test(secret)) return 'it contains a placeholder word';
  const distinct = new Set(secret).size;
  if (distinct < 12) return `only ${distinct} distinct characters`;
  const hex = /^[0-9a-f]+$/i.test(secret);
  let alphabet = 0;
  if (hex) alphabet = 16;
  else {
    if (/[a-z]/.test(secret)) alphabet += 26;
    if (/[A-Z]/.test(secret)) alphabet += 26;
    if (/[0-9]/.test(secret)) alphabet += 10;
    if (/[^a-zA-Z0-9]/.test(secret)) alphabet += 32;
  }
  const bits = secret.length * Math.log2(Math.max(2, Math.min(alphabet, distinct * 2)));
  return bits < 128 ? `about ${Math.floor(bits)} bits of entropy, fewer than 128` : null;
}
