import type { z } from 'zod';
import type { IngestBatchSchema, IngestEventSchema } from '../../../shared/contracts/ingest.ts';

/** One event as the SDK puts it on the wire: the input side of the ingest contract (type-only, no zod in the bundle). */
export type WireEvent = z.input<typeof IngestEventSchema>;
/** The body of POST /v1/ingest. */
export type WireBatch = z.input<typeof IngestBatchSchema>;
export type WireContext = WireBatch['context'];
export type Meta = Record<string, unknown>;

/** A conversion declared in config: reaching `page` (exact, or prefix when it ends in `*`) or clicking `selector`. */
export interface ConversionRule {
  name?: string;
  page?: string;
  selector?: string;
  value?: number;
}

/** Options of Friction.init(). Only key and endpoint are required. */
export interface FrictionOptions {
  /** Publishable key, `svc_pub_…`. A secret key is refused. */
  key: string;
  /** Ingest base URL, e.g. `https://ingest.example.com`; the SDK posts to `{endpoint}/v1/ingest`. */
  endpoint: string;
  environment?: string;
  appVersion?: string;
  /** Fraction of sessions recorded, 0..1 (default 1). Decided once per session. */
  sampleRate?: number;
  /** CSS selectors whose elements (and their descendants) never produce signals. */
  ignore?: string[];
  conversions?: ConversionRule[];
  /** Milliseconds between flushes (default 5000, at least 250). */
  flushInterval?: number;
}

/** GET /v1/sdk-config's `data`: the site's remote config for this environment. */
export interface RemoteConfig {
  sample_rate: number;
  ignore_selectors: string[];
}
