import { z } from 'zod';
import { Timestamp } from '../../http/common.schema.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';

export const SCOPES = ['ingest:write', 'query:read', 'manage:write', 'mcp:read', 'webhook:write'] as const;
/**
 * Which scopes each key type may carry. A secret key reads, manages and edits webhooks for its site; an MCP
 * key only reads; a publishable key (rotation of the one issued with the site) only sends events.
 */
export const SCOPES_BY_TYPE = {
  secret: ['query:read', 'manage:write', 'webhook:write'],
  mcp: ['mcp:read'],
  publishable: ['ingest:write'],
} as const satisfies Record<string, readonly (typeof SCOPES)[number][]>;

export const KeyCreateSchema = z
  .strictObject({
    site_id: Uuid(),
    key_type: z.enum(['secret', 'mcp', 'publishable']),
    scopes: z
      .array(z.enum(SCOPES))
      .min(1)
      .max(SCOPES.length)
      .refine((s) => new Set(s).size === s.length, 'must not repeat a scope'),
    name: z.string().trim().min(1).max(120).optional(),
  })
  .superRefine((b, ctx) => {
    const allowed: readonly string[] = SCOPES_BY_TYPE[b.key_type];
    b.scopes.forEach((s, i) => {
      if (!allowed.includes(s))
        ctx.addIssue({
          code: 'custom',
          path: ['scopes', i],
          message: `a ${b.key_type} key cannot carry ${s} (allowed: ${allowed.join(', ')})`,
        });
    });
  });

export const ApiKeySchema = z.object({
  id: Uuid(),
  site_id: Uuid().nullable(),
  key_type: z.enum(['secret', 'mcp', 'publishable']),
  name: z.string().nullable(),
  key_prefix: z.string().describe('the first characters, to recognise the key'),
  scopes: z.array(z.enum(SCOPES)),
  created_at: Timestamp,
  revoked_at: Timestamp.nullable(),
});
export const ApiKeyCreatedSchema = ApiKeySchema.extend({
  key: z.string().describe('the key itself: shown only in this response, stored only as a hash'),
});
export const ApiKeyListSchema = z.object({ site_id: Uuid(), keys: z.array(ApiKeySchema) });
