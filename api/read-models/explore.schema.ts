import { z } from 'zod';
import { Uuid } from '../../shared/contracts/uuid.ts';
import { EnvironmentParam } from '../../shared/contracts/environment.ts';
import { ENVIRONMENTS } from '../../shared/domain/deploy-verification.ts';

/**
 * The Explore query (spec "Explore query"), validated before anything is compiled. Every object is strict, so an
 * unknown key is a 400 naming its path; fields, ops, modes, metrics and group_bys are closed enums. Exact meanings
 * of the fields, metrics and groups are in docs/explorer.md and in the reference evaluator (explore.reference.ts).
 */

export const EXPLORE_MAX_FILTERS = 12;
export const EXPLORE_WINDOW_DAYS = { min: 1, max: 90, default: 7 } as const;
export const EXPLORE_LIST_LIMIT = { min: 1, max: 500, default: 100 } as const;
/** Most groups a measure answers; more are cut (sessions descending) and `meta.truncated` says so. */
export const EXPLORE_MAX_GROUPS = 500;
/** Most pages listed per session in list mode (`page_count` gives the full number). */
export const EXPLORE_MAX_SESSION_PAGES = 50;
/** Longest filter value: paths and names are short; this bounds what a LIKE pattern can be. */
export const EXPLORE_MAX_VALUE_LENGTH = 512;

export const TEXT_FIELDS = ['signal', 'page', 'source', 'event_type'] as const;
export const BOOLEAN_FIELDS = ['confused', 'converted'] as const;
export const FIELDS = ['signal', 'page', 'source', 'confused', 'converted', 'event_type'] as const;
export const OPS = ['is', 'is_not', 'contains'] as const;
export const METRICS = ['count', 'avg_pageviews', 'conversion_rate', 'avg_dwell_ms', 'bounce_rate'] as const;
export const GROUP_BYS = ['page', 'source', 'day', 'signal', 'cohort'] as const;

export type Op = (typeof OPS)[number];
export type Metric = (typeof METRICS)[number];
export type GroupBy = (typeof GROUP_BYS)[number];

const NO_NUL = /^[^\u0000]*$/;
const TextValue = z
  .string({ error: 'must be a string for the text fields signal, page, source and event_type' })
  .min(1)
  .max(EXPLORE_MAX_VALUE_LENGTH)
  .regex(NO_NUL, 'must not contain NUL characters');

const TextFilter = z.strictObject({
  field: z.enum(TEXT_FIELDS),
  op: z.enum(OPS),
  value: TextValue.describe(
    'the text to compare; `contains` matches it anywhere, case-sensitive, % _ and \\ taken literally',
  ),
});
const BooleanFilter = z.strictObject({
  field: z.enum(BOOLEAN_FIELDS),
  op: z.enum(['is', 'is_not'], {
    error: 'must be is or is_not: contains applies only to the text fields signal, page, source and event_type',
  }),
  value: z.boolean({ error: 'must be true or false for confused and converted' }),
});

/** One filter; the field decides which ops and which value type are allowed. */
export const ExploreFilterSchema = z.discriminatedUnion('field', [TextFilter, BooleanFilter], {
  error: (iss) => (iss.code === 'invalid_union' ? `field must be one of ${FIELDS.join(', ')}` : undefined),
});
export type ExploreFilter = z.infer<typeof ExploreFilterSchema>;

const ListOutput = z.strictObject({
  mode: z.literal('list'),
  limit: z
    .number()
    .int()
    .min(EXPLORE_LIST_LIMIT.min)
    .max(EXPLORE_LIST_LIMIT.max)
    .default(EXPLORE_LIST_LIMIT.default)
    .describe('sessions answered, 1-500, default 100; newest first'),
});
const MeasureOutput = z.strictObject({
  mode: z.literal('measure'),
  metric: z.enum(METRICS),
  group_by: z.enum(GROUP_BYS).optional(),
});
export const ExploreOutputSchema = z.discriminatedUnion('mode', [ListOutput, MeasureOutput], {
  error: (iss) => (iss.code === 'invalid_union' ? 'mode must be list or measure' : undefined),
});

export const ExploreQuerySchema = z
  .strictObject({
    window_days: z
      .number()
      .int()
      .min(EXPLORE_WINDOW_DAYS.min)
      .max(EXPLORE_WINDOW_DAYS.max)
      .default(EXPLORE_WINDOW_DAYS.default)
      .describe('sessions that started in the last window_days × 24 h, 1-90, default 7'),
    filters: z
      .array(ExploreFilterSchema)
      .max(EXPLORE_MAX_FILTERS, `at most ${EXPLORE_MAX_FILTERS} filters`)
      .default([])
      .describe('AND-ed; at most 12'),
    output: ExploreOutputSchema.default({ mode: 'list', limit: EXPLORE_LIST_LIMIT.default }),
  })
  .describe('An Explore query (docs/explorer.md)');
export type ExploreQuery = z.infer<typeof ExploreQuerySchema>;
export type ExploreMeasureOutput = z.infer<typeof MeasureOutput>;

/** `GET /v1/query/explore`: the query travels as URL-encoded JSON in `q`. */
export const ExploreGetQuerySchema = z.object({
  site_id: Uuid(),
  environment: EnvironmentParam,
  q: z
    .string({ error: 'is required: the Explore query as URL-encoded JSON' })
    .min(1, 'is required: the Explore query as URL-encoded JSON')
    .describe('the Explore query as URL-encoded JSON, the same document POST takes as its body'),
});
/** `POST /v1/query/explore`: the site and environment in the query string, the Explore query as the body. */
export const ExplorePostQuerySchema = z.object({ site_id: Uuid(), environment: EnvironmentParam });

const Timestamp = z.iso.datetime();

export const ExploreSessionSchema = z.object({
  session_id: z.string(),
  first_seen: Timestamp.describe("the session's earliest event"),
  last_seen: Timestamp.describe("the session's latest event"),
  dwell_ms: z.number().describe('last_seen − first_seen, in milliseconds'),
  page_views: z.number().int(),
  pages: z
    .array(z.string())
    .describe('distinct pages the session had any event on, in order of first visit; at most 50'),
  page_count: z.number().int().describe('number of distinct pages (pages may list fewer)'),
  signals: z.record(z.string(), z.number().int()).describe('signal events by signal type'),
  confused: z.boolean(),
  converted: z.boolean(),
  conversions: z.number().int(),
  revenue: z.number().describe("sum of the conversion events' values"),
  source: z.string().describe("the SDK's context.source, or (direct) when none was sent"),
  device: z.string(),
  app_version: z.string().nullable(),
});
export type ExploreSession = z.infer<typeof ExploreSessionSchema>;

export const ExploreGroupSchema = z.object({
  key: z
    .string()
    .nullable()
    .describe(
      'the group: a page, source, UTC day (YYYY-MM-DD), signal type or app version; null for sessions without one (no signal, no app version)',
    ),
  value: z.number().nullable().describe("the metric over the group's sessions"),
  sessions: z.number().int().describe('sessions in the group'),
});

const Unit = z.enum(['sessions', 'page_views', 'ratio', 'ms']);

export const ExploreMetaSchema = z.object({
  took_ms: z.number().describe('time the engine spent, compilation and database included'),
  truncated: z.boolean().describe('true when more sessions (list) or groups (measure) matched than were answered'),
  window: z
    .object({ days: z.number().int(), from: Timestamp, to: Timestamp })
    .describe('sessions whose first event is in [from, to]'),
  rows_scanned: z
    .number()
    .int()
    .nullable()
    .describe(
      'rows the database read to answer, when known; null when the engine cannot know it without a second pass',
    ),
  statement_timeout_ms: z.number().int().describe('the query was cancelled (503) had it run longer'),
});

export const ExploreResultSchema = z.object({
  site_id: Uuid(),
  environment: z.enum(ENVIRONMENTS),
  query: ExploreQuerySchema.describe('the query as run, defaults filled in'),
  result: z.discriminatedUnion('mode', [
    z.object({ mode: z.literal('list'), sessions: z.array(ExploreSessionSchema) }),
    z.object({
      mode: z.literal('measure'),
      metric: z.enum(METRICS),
      unit: Unit.describe(
        'count: sessions; avg_pageviews: page_views per session; conversion_rate and bounce_rate: ratio 0-1; avg_dwell_ms: ms',
      ),
      group_by: z.enum(GROUP_BYS).nullable(),
      value: z
        .number()
        .nullable()
        .describe('the metric over every matching session (null for an average of no sessions)'),
      sessions: z.number().int().describe('matching sessions'),
      groups: z
        .array(ExploreGroupSchema)
        .describe('by group_by; empty without group_by. Days ascending, other groups by sessions descending then key'),
    }),
  ]),
  meta: ExploreMetaSchema,
});
export type ExploreResult = z.infer<typeof ExploreResultSchema>;
export type ExploreAnswer = Omit<ExploreResult, 'meta'> & {
  meta: Omit<ExploreResult['meta'], 'took_ms' | 'statement_timeout_ms'>;
};
