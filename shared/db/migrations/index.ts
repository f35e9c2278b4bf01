import type { Migration } from 'kysely/migration';
import * as m0001 from './0001_create_core.ts';
import * as m0002 from './0002_create_ux_issues.ts';

/** Every migration, in order. Static so the same code runs everywhere; a test checks it against the folder. */
export const migrations: Record<string, Migration> = {
  '0001_create_core': m0001,
  '0002_create_ux_issues': m0002,
};
