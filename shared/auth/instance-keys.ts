import { hkdfSync } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { readOrCreateInstanceSecret } from '../db/queries/instance-secrets.queries.ts';
import { randomToken } from '../ids.ts';

/**
 * The keys derived from the instance secret: FRICTION_SECRET when set, else a random secret generated once
 * and kept in the database, so every replica sharing the database (and every restart) agrees on it.
 * Each purpose gets its own HKDF-derived key, so a key leaked for one use does not serve another.
 */
export class InstanceKeys {
  private readonly db: Kysely<Database>;
  private readonly configured: string | undefined;
  private master: Promise<string> | undefined;

  constructor(db: Kysely<Database>, configuredSecret: string | undefined) {
    this.db = db;
    this.configured = configuredSecret;
  }

  private secret(): Promise<string> {
    this.master ??= this.configured
      ? Promise.resolve(this.configured)
      : readOrCreateInstanceSecret(this.db, 'master', randomToken(64)).catch((err) => {
          this.master = undefined; // a transient database failure must not poison every later request
          throw err;
        });
    return this.master;
  }

  private async derive(purpose: string): Promise<Buffer> {
    return Buffer.from(hkdfSync('sha256', await this.secret(), Buffer.alloc(0), `friction:${purpose}`, 32));
  }

  /** HMAC key of user tokens. */
  jwtKey(): Promise<Buffer> {
    return this.derive('jwt:v1');
  }

  /** AES-256-GCM key of sealed secrets (secret-box.ts). */
  sealKey(): Promise<Buffer> {
    return this.derive('seal:v1');
  }
}
