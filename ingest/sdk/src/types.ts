import type { z } from 'zod';
import type { IngestBatchSchema, IngestEventSchema } from '../../../shared/contracts/ingest.ts';

/** One event as the SDK puts it on the wire: the input side of the ingest contract (type-only, no zod in the bundle). */
export type WireEvent = z.input<typeof IngestEventSchema>;
/** The body of POST /v1/ingest. */
export type WireBatch = z.input<typeof IngestBatchSchema>;
export type WireContext = WireBatch['context'];
export type Meta = Record<string, unknown>;

/** init()'s options and conversion rules: the published declarations are the one definition. */
export type { ConversionRule, FrictionOptions } from '../friction.d.ts';

/** GET /v1/sdk-config's `data`: the site's remote config for this environment. */
export interface RemoteConfig {
  sample_rate: number;
  ignore_selectors: string[];
}
