import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { EnvironmentParam } from '../../../shared/contracts/environment.ts';

/** The spec's `/query/raw` tables. */
export const RAW_TABLES = [
  'events',
  'signals',
  'sessions',
  'page_scores',
  'score_history',
  'ux_issues',
  'alerts',
  'deploys',
] as const;
export type RawTable = (typeof RAW_TABLES)[number];

export const RawQuerySchema = z.object({
  site_id: Uuid(),
  table: z.enum(RAW_TABLES),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  /** A column of the table; checked against the table's columns (400 naming `sort` otherwise). */
  sort: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a column name')
    .optional(),
  order: z.enum(['asc', 'desc']).default('desc'),
  /** Rows of this environment; `alerts` are production's only (alert rules watch production), so staging's are none. */
  environment: EnvironmentParam,
});

export const RawResponseSchema = z.object({
  site_id: Uuid(),
  table: z.enum(RAW_TABLES),
  sort: z.string(),
  order: z.enum(['asc', 'desc']),
  limit: z.number().int(),
  rows: z.array(z.record(z.string(), z.unknown())).describe('rows as stored: the columns of the table'),
});
