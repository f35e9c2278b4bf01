import { z } from 'zod';

/**
 * The SDK config of one site environment: what the browser SDK is told to record. The spec names
 * `revenue_config` and `segment.app_version`; sampling and ignore selectors complete it.
 */
export const RevenueConfigSchema = z.strictObject({
  /** Whether conversion values are counted as revenue (enables /query/revenue). */
  enabled: z.boolean(),
  /** ISO 4217 code of conversion values. */
  currency: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD'),
  /** The event that counts as a conversion: `conversion` events, or a custom event of this name. */
  conversion_event: z.string().min(1).max(128),
});

export const SdkConfigSchema = z.strictObject({
  /** Fraction of sessions the SDK records, 0 to 1. */
  sample_rate: z.number().min(0).max(1),
  /** CSS selectors whose elements never produce signals (at most 100, each at most 512 characters). */
  ignore_selectors: z.array(z.string().min(1).max(512)).max(100),
  /** `app_version` tags sessions so they can be associated with deploys (it does not replace recording a deploy). */
  segment: z.strictObject({ app_version: z.string().min(1).max(64).nullable() }),
  revenue_config: RevenueConfigSchema,
});
export type SdkConfig = z.infer<typeof SdkConfigSchema>;

export const DEFAULT_SDK_CONFIG: SdkConfig = {
  sample_rate: 1,
  ignore_selectors: [],
  segment: { app_version: null },
  revenue_config: { enabled: false, currency: 'USD', conversion_event: 'conversion' },
};

/** A change to an SDK config: top-level fields replace the stored ones; `revenue_config` and `segment` merge field by field. */
export const SdkConfigPatchSchema = SdkConfigSchema.extend({
  segment: SdkConfigSchema.shape.segment.partial(),
  revenue_config: RevenueConfigSchema.partial(),
}).partial();
export type SdkConfigPatch = z.infer<typeof SdkConfigPatchSchema>;

/** Applies a patch (pure): `{ revenue_config: { enabled: true } }` turns revenue on and keeps currency and event. */
export function mergeSdkConfig(before: SdkConfig, patch: SdkConfigPatch): SdkConfig {
  const defined = <T extends object>(o: T) =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
  const { segment, revenue_config, ...rest } = patch;
  return {
    ...before,
    ...defined(rest),
    segment: { ...before.segment, ...defined(segment ?? {}) },
    revenue_config: { ...before.revenue_config, ...defined(revenue_config ?? {}) },
  };
}

/** The environment every site starts with (spec: site creation creates its production environment). */
export const DEFAULT_ENVIRONMENT = 'production';
/** Environment names: short lowercase slugs, such as `production` or `staging`. */
export const EnvironmentNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,31}$/, 'must be a lowercase slug of at most 32 characters');

/** A stored config read back through the schema; fields added to the schema later take their defaults. */
export const readSdkConfig = (stored: unknown): SdkConfig =>
  SdkConfigSchema.parse({ ...DEFAULT_SDK_CONFIG, ...(stored && typeof stored === 'object' ? stored : {}) });

/**
 * What the browser SDK is told (GET /v1/sdk-config): only the fields it applies. Revenue settings stay
 * server-side (they change how conversions are read, not what the browser sends).
 */
export interface PublicSdkConfig {
  environment: string;
  sample_rate: number;
  ignore_selectors: string[];
  segment: { app_version: string | null };
}

export const toPublicSdkConfig = (environment: string, c: SdkConfig): PublicSdkConfig => ({
  environment,
  sample_rate: c.sample_rate,
  ignore_selectors: c.ignore_selectors,
  segment: { app_version: c.segment.app_version },
});

const normalizeSelector = (s: string): string =>
  s
    .trim()
    .replace(/\s*>\s*/g, ' > ')
    .replace(/\s+/g, ' ');

/**
 * Whether a signal recorded on `selector` falls under one of the `ignore` selectors, judged from the
 * recorded selector alone (ingest has no DOM). The SDK records a unique `>` path anchored at the nearest
 * element with a stable id, test id or aria-label, so an ignored element named that way appears in the
 * path of every signal on it or inside it: the selector itself, `#pay > span`, `main > #pay`. Class and
 * attribute selectors the SDK never records cannot be recognised here; the SDK applies those itself,
 * against the DOM, once it has loaded the config.
 */
export function ignoredSelector(selector: string, ignore: readonly string[]): boolean {
  if (ignore.length === 0) return false;
  const path = ` > ${normalizeSelector(selector)} > `;
  return ignore.some((s) => {
    const n = normalizeSelector(s);
    return n !== '' && path.includes(` > ${n} > `);
  });
}
