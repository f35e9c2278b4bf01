import { hkdfSync } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { loadInstanceSecret, type InstanceSecret } from './instance-secret.ts';

/** The settings the instance secret comes from. */
export type SecretConfig = Pick<Config, 'FRICTION_SECRET' | 'FRICTION_DATA_DIR' | 'DATABASE_URL'>;

/**
 * The keys derived from the instance secret: FRICTION_SECRET when set, else a random secret generated once into
 * FRICTION_DATA_DIR/instance-secret (mode 0600), never the database (instance-secret.ts).
 * Each purpose gets its own HKDF-derived key, so a key leaked for one use does not serve another.
 */
export class InstanceKeys {
  private readonly db: Kysely<Database>;
  private readonly config: SecretConfig;
  private master: Promise<InstanceSecret> | undefined;

  constructor(db: Kysely<Database>, config: SecretConfig) {
    this.db = db;
    this.config = config;
  }

  /** The secret with where it came from and what the operator should hear at start. */
  load(): Promise<InstanceSecret> {
    this.master ??= loadInstanceSecret(this.db, {
      configured: this.config.FRICTION_SECRET,
      dataDir: this.config.FRICTION_DATA_DIR,
      externalDatabase: this.config.DATABASE_URL !== undefined,
    }).catch((err) => {
      this.master = undefined; // a transient failure must not poison every later request
      throw err;
    });
    return this.master;
  }

  private async derive(purpose: string): Promise<Buffer> {
    return Buffer.from(hkdfSync('sha256', (await this.load()).value, Buffer.alloc(0), `friction:${purpose}`, 32));
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
