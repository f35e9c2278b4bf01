import { z } from 'zod';
import { PagePatternSchema } from '../../../shared/domain/page-pattern.ts';
import { NON_EMPTY, nonEmpty, Timestamp } from '../../http/common.schema.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';

export const TRIGGER_TYPES = ['spike', 'anomaly', 'new_page', 'trend', 'co_occurrence', 'positive', 'budget'] as const;
export const CHANNELS = ['email', 'slack', 'webhook', 'mcp', 'pagerduty'] as const;

const Channels = z
  .array(z.enum(CHANNELS))
  .max(CHANNELS.length)
  .refine((c) => new Set(c).size === c.length, 'must not repeat a channel');
/** Slack channel names are lower case; `#Alerts` is taken as `#alerts`. */
const SlackChannel = z
  .string()
  .regex(/^#?[a-z0-9][a-z0-9._-]{0,79}$/i, 'must be a Slack channel name such as #alerts')
  .toLowerCase();
/** `config.page_pattern` and top-level `page_pattern` are two spellings of one field (spec: both references). */
const Config = z.strictObject({ page_pattern: PagePatternSchema.nullable().optional() });

const fields = {
  name: z.string().trim().min(1).max(120),
  trigger_type: z.enum(TRIGGER_TYPES),
  threshold: z.number().int().min(0).max(1000),
  /** At most a week between two firings of one rule. */
  cooldown_minutes: z.number().int().min(0).max(10_080),
  channels: Channels,
  config: Config,
  page_pattern: PagePatternSchema.nullable(),
  slack_channel: SlackChannel.nullable(),
  enabled: z.boolean(),
};

/** Both spellings of the page pattern may be sent only when they agree. */
function samePattern(
  v: { page_pattern?: string | null; config?: { page_pattern?: string | null } },
  ctx: z.RefinementCtx,
): void {
  const top = v.page_pattern;
  const nested = v.config?.page_pattern;
  if (top !== undefined && nested !== undefined && top !== nested) {
    ctx.addIssue({
      code: 'custom',
      path: ['page_pattern'],
      message: 'differs from config.page_pattern; send one of them',
    });
  }
}

/** Defaults of a rule created with only its site (the spec requires nothing else): a score spike of 20 points. */
export const DEFAULT_TRIGGER = 'spike';
export const DEFAULT_THRESHOLD = 20;

export const AlertRuleCreateSchema = z
  .strictObject({
    site_id: Uuid(),
    trigger_type: fields.trigger_type.default(DEFAULT_TRIGGER),
    threshold: fields.threshold.default(DEFAULT_THRESHOLD),
    name: fields.name.optional(),
    cooldown_minutes: fields.cooldown_minutes.default(60),
    channels: fields.channels.default([]),
    config: fields.config.optional(),
    page_pattern: fields.page_pattern.optional(),
    slack_channel: fields.slack_channel.optional(),
    enabled: fields.enabled.default(true),
  })
  .superRefine(samePattern);

export const AlertRulePatchSchema = z
  .strictObject({
    name: fields.name.optional(),
    trigger_type: fields.trigger_type.optional(),
    threshold: fields.threshold.optional(),
    cooldown_minutes: fields.cooldown_minutes.optional(),
    channels: fields.channels.optional(),
    config: fields.config.optional(),
    page_pattern: fields.page_pattern.optional(),
    slack_channel: fields.slack_channel.optional(),
    enabled: fields.enabled.optional(),
  })
  .superRefine(samePattern)
  .refine(nonEmpty, NON_EMPTY);
export type AlertRulePatch = z.infer<typeof AlertRulePatchSchema>;

export const AlertRuleSchema = z.object({
  id: Uuid(),
  site_id: Uuid(),
  name: z.string(),
  trigger_type: z.enum(TRIGGER_TYPES),
  threshold: z.number().int(),
  cooldown_minutes: z.number().int(),
  channels: z.array(z.enum(CHANNELS)),
  config: z.object({ page_pattern: z.string().nullable() }),
  page_pattern: z.string().nullable(),
  slack_channel: z.string().nullable(),
  enabled: z.boolean(),
  last_fired_at: Timestamp.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
  held_back: z
    .array(z.object({ page: z.string(), since: Timestamp, reason: z.string().nullable() }))
    .describe(
      'pages where the rule is held back because its condition flaps (4 changes in 20 evaluations); listed by GET only',
    ),
});
export const AlertRuleListSchema = z.object({ site_id: Uuid(), alert_rules: z.array(AlertRuleSchema) });
