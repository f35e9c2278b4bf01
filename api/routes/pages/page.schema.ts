import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';

/** Text of a query parameter: PostgreSQL text cannot hold NUL, so one is a 400 here rather than a database error. */
export const QueryText = (max: number) => z.string().min(1).max(max).regex(/^[^\u0000]*$/, 'must not contain NUL characters');

/** A page path as stored (ingest normalises pages to their path). */
export const PagePath = QueryText(2048).describe('page path, e.g. /checkout');

export const PageQuerySchema = z.object({ site_id: Uuid(), page: PagePath });
export type PageQuery = z.infer<typeof PageQuerySchema>;

/** Spec bounds: trends and insights `days` 1 to 90, default 7. */
export const DaysParam = z.coerce.number().int().min(1).max(90).default(7).describe('days of history, 1-90');

export const TrendsQuerySchema = z.object({ site_id: Uuid(), page: PagePath.optional(), days: DaysParam });
export type TrendsQuery = z.infer<typeof TrendsQuerySchema>;

export const CompareQuerySchema = z.object({ site_id: Uuid(), a: PagePath, b: PagePath });
export type CompareQuery = z.infer<typeof CompareQuerySchema>;
