import type { Kysely } from 'kysely';
import type { ExploreEngineDeps } from '../../routes/explore/explore.engine.ts';
import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import type { Database } from '../../../shared/db/database.ts';
import { ENVIRONMENTS, type Environment } from '../../../shared/domain/deploy-verification.ts';
import { NotFoundError, ValidationError } from '../../../shared/errors.ts';
import { requireSite, type Principal } from '../../http/auth.ts';

/** What a tool runs with: the database, the clock and the caller (its sites bound every answer). */
export interface ToolContext {
  db: Kysely<Database>;
  now(): Date;
  principal: Principal;
  explore: ExploreEngineDeps;
}

/** A tool's answer: `data` becomes structuredContent (checked against the output schema), `summary` the text content. */
export interface ToolAnswer<O> {
  data: O;
  summary: string;
}

/**
 * One MCP tool: read-only by construction (it gets a reader's context and no write path), described in one line,
 * with an input shape and an output schema. Adding a tool is one file with one `defineTool` and a line in index.ts.
 */
export interface ToolDef<I extends z.ZodRawShape = z.ZodRawShape, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  /** `siteId`: the `site_id` argument (or the caller's only site), already checked against the caller's sites. */
  run(c: ToolContext, args: z.output<z.ZodObject<I>>, siteId: string): Promise<ToolAnswer<z.output<O>>>;
}

export const defineTool = <I extends z.ZodRawShape, O extends z.ZodObject>(t: ToolDef<I, O>): ToolDef<I, O> => t;

/** Input fields most tools share. */
export const siteArg = z.string().max(64).optional().describe("default: the key's site");
export const environmentArg = z.enum(ENVIRONMENTS).optional();
export const limitArg = (max: number, def: number) =>
  z.number().int().min(1).max(max).optional().describe(`default ${def}`);
/** Counts in output schemas: plain numbers, as integer bounds would cost tools/list bytes on every count. */
export const Count = z.number();

/**
 * The site a call reads: the one given, or the caller's only site. A site the caller cannot see answers exactly like a
 * missing one (not found), so other tenants' ids cannot be probed through the tools either.
 */
export function resolveSite(principal: Principal, siteId: string | undefined): string {
  const only = principal.siteIds.size === 1 ? [...principal.siteIds][0] : undefined;
  const id = siteId ?? only;
  if (!id) throw new ValidationError('site_id is required: this credential reaches several sites');
  // A malformed id is answered like another tenant's.
  if (!Uuid().safeParse(id).success) throw new NotFoundError('site not found');
  requireSite(principal, id);
  return id;
}

export const envOf = (e: Environment | undefined): Environment => e ?? 'production';

/** A page of a list: the items kept and whether the list was cut. */
export const listMeta = { total: Count, truncated: z.boolean() };
