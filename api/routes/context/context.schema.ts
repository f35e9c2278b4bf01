import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { EnvironmentParam } from '../../../shared/contracts/environment.ts';
import { ENVIRONMENTS } from '../../../shared/domain/deploy-verification.ts';

export const ContextQuerySchema = z.object({ site_id: Uuid(), environment: EnvironmentParam });

/** Most items of each list in the context (docs/mcp.md): an assistant reads the worst first, then asks a tool for more. */
export const CONTEXT_CAPS = { pages: 10, issues: 10, deploys: 5, alerts: 5, recommendations: 5 } as const;
/** Most bytes of the context's JSON (`data`, without the envelope): lists are cut from the longest until it fits. */
export const CONTEXT_BUDGET_BYTES = 8 * 1024;
/** Longest free text (titles, page paths, recommendations) in the context; longer ones end in `…`. */
export const CONTEXT_TEXT_MAX = 120;

const Timestamp = z.string();
const Trend = z.enum(['up', 'down', 'stable']);
/**
 * NOTE: plain strings and numbers (no uuid pattern, no integer bounds) and few descriptions: this schema is also the MCP
 * tool's output schema, which every assistant loads into its context with tools/list (budget 16 KB for all tools).
 */
const Id = z.string();
const Count = z.number();
/** A capped list: `total` counts all before the cap, `truncated` is true when items holds fewer. */
const capped = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), total: Count, truncated: z.boolean() });

export const ContextPageSchema = z.object({
  page: z.string(),
  score: z.number(),
  trend: Trend,
  dominant_signal: z.string().nullable(),
});
export const ContextIssueSchema = z.object({
  id: Id,
  title: z.string(),
  page: z.string(),
  signal_type: z.string(),
  severity: z.number(),
  status: z.string(),
  affected_sessions: Count,
});
export const ContextDeploySchema = z.object({
  id: Id,
  version: z.string(),
  recorded_at: Timestamp,
  confusion_before: z.number(),
  confusion_after: z.number().nullable(),
  delta: z.number().nullable(),
  verdict: z.enum(['PASS', 'WARN', 'FAIL']),
  verdict_reasons: z.array(z.string()),
});
export const ContextAlertSchema = z.object({
  id: Id,
  rule_name: z.string(),
  page: z.string().nullable(),
  trigger_type: z.string(),
  score_before: z.number().nullable(),
  score_after: z.number().nullable(),
  status: z.string(),
  triggered_at: Timestamp,
  mcp_channel: z.boolean(),
});
export const ContextRecommendationSchema = z.object({
  rank: Count,
  recommendation: z.string(),
  page: z.string(),
  issue_id: Id,
  severity: z.number(),
  affected_sessions: Count,
});

/** GET /v1/query/mcp/context and /v1/mcp/context (unnamed: the MCP tool's output schema inlines it). */
export const SiteContextObject = z.object({
  site_id: Id,
  environment: z.enum(ENVIRONMENTS),
  generated_at: Timestamp,
  overall_score: z.number(),
  overall_trend: Trend,
  pages: capped(ContextPageSchema),
  issues: capped(ContextIssueSchema),
  deploys: capped(ContextDeploySchema),
  alerts: capped(ContextAlertSchema),
  recommendations: capped(ContextRecommendationSchema),
});
export const SiteContextSchema = SiteContextObject.meta({ id: 'SiteContext' });
export type SiteContext = z.output<typeof SiteContextSchema>;
