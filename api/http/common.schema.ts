import { z } from 'zod';
import { Uuid } from '../../shared/contracts/uuid.ts';
import { EnvironmentParam } from '../../shared/contracts/environment.ts';
import { urlCredentialProblem } from '../../shared/auth/redact.ts';

/** An absolute http(s) URL of at most 2048 characters, carrying no credentials (they would be stored and shown in the clear). */
export const HttpUrlSchema = z
  .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
  .max(2048)
  .superRefine((url, ctx) => {
    const problem = urlCredentialProblem(url);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

// Query strings ignore parameters they do not know (like the read routes): a generic client adding site_id to an
// org-scoped list is not an error. Bodies stay strict.
export const OrgQuerySchema = z.object({ org_id: Uuid() });
export const SiteQuerySchema = z.object({ site_id: Uuid() });
/** A list of an org's objects or of one site's (org_id, site_id or both). */
export const OrgOrSiteQuerySchema = z
  .object({ org_id: Uuid().optional(), site_id: Uuid().optional() })
  .refine((q) => q.org_id !== undefined || q.site_id !== undefined, {
    path: ['org_id'],
    error: 'org_id or site_id is required',
  });
/** A read route's site and environment (default production). */
export const SiteReadQuerySchema = z.object({ site_id: Uuid(), environment: EnvironmentParam });

/** A PATCH body must change something. */
export const nonEmpty = <T extends object>(v: T): boolean => Object.values(v).some((x) => x !== undefined);
/** Judged only on an otherwise valid body: an unknown field is the whole story, not also "nothing to change". */
export const NON_EMPTY = {
  error: 'name at least one field to change',
  when: (p: { issues: readonly unknown[] }) => p.issues.length === 0,
};

export const Timestamp = z.iso.datetime();

/** Body of a successful DELETE (the spec leaves it unspecified). */
export const DeletedSchema = z.object({ id: Uuid(), deleted: z.literal(true) });

/** Text of a query parameter: PostgreSQL text cannot hold NUL, so one is a 400 here rather than a database error. */
export const QueryText = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[^\u0000]*$/, 'must not contain NUL characters');

/** A page path as stored (ingest normalises pages to their path). */
export const PagePath = QueryText(2048).describe('page path, e.g. /checkout');

/** Spec bounds: trends and insights `days` 1 to 90, default 7. */
export const DaysParam = z.coerce.number().int().min(1).max(90).default(7).describe('days of history, 1-90');

/** Lowercased at the boundary: emails compare case-insensitively everywhere. */
export const EmailSchema = z
  .email()
  .max(254)
  .transform((e) => e.trim().toLowerCase());
