import { z } from 'zod';
import { Uuid } from '../../shared/contracts/uuid.ts';
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
