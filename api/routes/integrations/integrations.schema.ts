import { z } from 'zod';
import { Timestamp } from '../../http/common.schema.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { slackWebhookPath } from '../../../shared/net/provider-urls.ts';

export const PROVIDERS = ['slack', 'pagerduty', 'linear', 'github'] as const;
export type Provider = (typeof PROVIDERS)[number];

const SlackChannel = z.string().regex(/^#?[a-z0-9][a-z0-9._-]{0,79}$/, 'must be a Slack channel name such as #alerts');

/**
 * Per-provider config, validated by shape so a typo fails at connect time, not at the first alert.
 * Slack: an incoming-webhook URL, or a bot token with a channel.
 */
export const SlackConfigSchema = z.union([
  z.strictObject({
    webhook_url: z
      .string()
      .max(512)
      .refine(
        (u) => slackWebhookPath(u) !== null,
        'must be a Slack incoming-webhook URL: https://hooks.slack.com/services/… (no user info, port, query, backslash or encoded characters)',
      ),
    channel: SlackChannel.optional(),
  }),
  z.strictObject({
    bot_token: z.string().regex(/^xox[bp]-[A-Za-z0-9-]{10,250}$/, 'must be a Slack bot token (xoxb-…)'),
    channel: SlackChannel,
  }),
]);
export const PagerDutyConfigSchema = z.strictObject({
  routing_key: z.string().regex(/^[A-Za-z0-9]{32}$/, 'must be a 32-character Events API v2 integration key'),
  severity: z.enum(['critical', 'error', 'warning', 'info']).default('error'),
});
export const LinearConfigSchema = z.strictObject({
  api_key: z.string().regex(/^lin_api_[A-Za-z0-9]{20,120}$/, 'must be a Linear API key (lin_api_…)'),
  team_id: z.string().min(1).max(64),
});
export const GithubConfigSchema = z.strictObject({
  token: z
    .string()
    .regex(/^(ghp_|github_pat_|gho_|ghs_)[A-Za-z0-9_]{20,250}$/, 'must be a GitHub token (ghp_… or github_pat_…)'),
  repository: z.string().regex(/^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/, 'must be owner/name'),
});

/** Config fields that are credentials: sealed apart, never returned. */
export const SECRET_FIELDS: Record<Provider, readonly string[]> = {
  slack: ['webhook_url', 'bot_token'],
  pagerduty: ['routing_key'],
  linear: ['api_key'],
  github: ['token'],
};

export const IntegrationCreateSchema = z.discriminatedUnion('provider', [
  z.strictObject({ site_id: Uuid(), provider: z.literal('slack'), config: SlackConfigSchema }),
  z.strictObject({ site_id: Uuid(), provider: z.literal('pagerduty'), config: PagerDutyConfigSchema }),
  z.strictObject({ site_id: Uuid(), provider: z.literal('linear'), config: LinearConfigSchema }),
  z.strictObject({ site_id: Uuid(), provider: z.literal('github'), config: GithubConfigSchema }),
]);

export const IntegrationSchema = z.object({
  id: Uuid(),
  site_id: Uuid(),
  provider: z.enum(PROVIDERS),
  config: z.record(z.string(), z.unknown()).describe('the non-secret fields'),
  secrets: z.array(z.string()).describe('names of the stored secret fields; their values are never returned'),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const IntegrationListSchema = z.object({ integrations: z.array(IntegrationSchema) });
