import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';

export const AuditQuerySchema = z.object({
  org_id: Uuid(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  actor: z
    .string()
    .trim()
    .min(1)
    .max(320)
    .optional()
    .describe("only entries by this actor: a user's email, a key's display prefix, or the actor_id"),
  action: z
    .string()
    .regex(
      /^[a-z_]+(\.[a-z_]+|\.\*)$/,
      'must be an action such as auth.login, or resource.* for every action on a resource',
    )
    .optional()
    .describe('only entries of this action (auth.login), or of every action on one resource (auth.*)'),
});

export const AuditEntrySchema = z.object({
  id: z.number().int(),
  created_at: z.iso.datetime(),
  site_id: Uuid().nullable(),
  actor_type: z.enum(['user', 'key']),
  actor_id: Uuid().nullable(),
  actor: z.string().describe("the user's email or the key's display prefix"),
  action: z.string().describe('resource.verb, e.g. alert.update'),
  target_type: z.string(),
  target_id: z.string(),
  summary: z
    .record(z.string(), z.unknown())
    .describe('created fields, or changes: { field: { from, to } }; never secrets'),
});

export const AuditListSchema = z.object({ org_id: Uuid(), entries: z.array(AuditEntrySchema) });
