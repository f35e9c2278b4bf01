import { z } from 'zod';
import { Timestamp } from '../../http/common.schema.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { StorableInstant } from '../../../shared/contracts/instant.ts';

export const AnnotationCreateSchema = z.strictObject({
  message: z.string().trim().min(1).max(1000),
  /** Required with a user token; a site-scoped key may omit it (its own site). */
  site_id: Uuid().optional(),
  page: z.string().regex(/^\//, 'must be a path starting with /').max(2048).optional(),
  /** When it happened; default now. */
  occurred_at: StorableInstant().optional(),
});

export const AnnotationSchema = z.object({
  id: Uuid(),
  site_id: Uuid(),
  message: z.string(),
  page: z.string().nullable(),
  occurred_at: Timestamp,
  created_by: z.string(),
  created_at: Timestamp,
});
export const AnnotationListQuerySchema = z.object({
  site_id: Uuid(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export const AnnotationListSchema = z.object({ site_id: Uuid(), annotations: z.array(AnnotationSchema) });
