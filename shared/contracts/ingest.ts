import { z } from 'zod';
import { Uuid } from './uuid.ts';
import { measureJson } from '../text.ts';
import { checkLegacyCoordinates, LegacyCoordinateFields } from './legacy-coordinates.ts';

/**
 * The browser ingest contract (ARCHITECTURE.md, "Ingest"): what `POST /v1/ingest` accepts from the SDK,
 * and the normalized batch that ingest publishes on the stream for the processor.
 */

/** Most events one batch may carry; the SDK flushes well below this. */
export const MAX_EVENTS_PER_BATCH = 500;
/** Largest accepted body, after gzip inflation, in bytes. */
export const MAX_INGEST_BODY_BYTES = 1024 * 1024;
/** Events stamped further in the future than this are refused (client clock skew beyond reason). */
export const MAX_FUTURE_SKEW_MS = 60 * 60 * 1000;
/** Events older than this are refused: scores and issues only look back this far. */
export const MAX_EVENT_AGE_MS = 30 * 24 * 60 * 60 * 1000;

/** `meta` nests at most this deep (the meta object itself is level 1) and serializes to at most MAX_META_CHARS. */
export const MAX_META_DEPTH = 8;
export const MAX_META_CHARS = 2048;

export const EVENT_TYPES = ['page_view', 'signal', 'conversion', 'custom'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const DEVICES = ['desktop', 'mobile', 'tablet'] as const;

/** Element-, viewport- and document-relative coordinates: integers 0..1000 (0,0 is top-left). */
const Coordinate = z.number().int().min(0).max(1000);

/** ISO 8601 string with offset, or epoch milliseconds; normalized to epoch ms. */
export const Timestamp = z
  .union([z.iso.datetime({ offset: true }), z.number().int().positive()])
  .transform((v) => (typeof v === 'number' ? v : Date.parse(v)));

/** Signal type names are lowercase snake_case; unknown types are stored but weigh nothing. */
export const SignalName = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be lowercase snake_case, at most 64 characters');

export const IngestEventSchema = z
  .object({
    id: Uuid(),
    type: z.enum(EVENT_TYPES),
    ts: Timestamp,
    page: z.string().min(1).max(2048),
    signal: SignalName.optional(),
    name: z.string().min(1).max(128).optional(),
    selector: z.string().max(512).optional(),
    label: z.string().max(200).optional(),
    x: Coordinate.optional(),
    y: Coordinate.optional(),
    vx: Coordinate.optional(),
    vy: Coordinate.optional(),
    px: Coordinate.optional(),
    py: Coordinate.optional(),
    ...LegacyCoordinateFields,
    value: z.number().finite().min(0).max(1e12).optional(),
    meta: z
      .record(z.string().max(64), z.unknown())
      .superRefine((m, ctx) => {
        // Measured without recursion and before anything serializes it: a 2 KB body can nest thousands of levels.
        const size = measureJson(m, { maxDepth: MAX_META_DEPTH, maxChars: MAX_META_CHARS });
        if (size.tooDeep) ctx.addIssue({ code: 'custom', message: `must nest at most ${MAX_META_DEPTH} levels deep` });
        else if (size.tooLong)
          ctx.addIssue({ code: 'custom', message: `must serialize to at most ${MAX_META_CHARS} characters of JSON` });
      })
      .optional(),
  })
  .superRefine((e, ctx) => {
    checkLegacyCoordinates(e, ctx);
    if (e.type === 'signal' && e.signal === undefined) {
      ctx.addIssue({ code: 'custom', path: ['signal'], message: 'is required when type is signal' });
    }
    if (e.type === 'custom' && e.name === undefined) {
      ctx.addIssue({ code: 'custom', path: ['name'], message: 'is required when type is custom' });
    }
  });

export const IngestContextSchema = z.object({
  device: z.enum(DEVICES),
  viewport: z.object({ w: z.number().int().min(0).max(100_000), h: z.number().int().min(0).max(100_000) }),
  referrer: z.string().max(2048).optional(),
  source: z.string().max(128).optional(),
  app_version: z.string().max(64).optional(),
  environment: z.string().max(32).optional(),
  anonymous_id: z.string().max(128).optional(),
});

/**
 * Body of `POST /v1/ingest`. `key` is only for `navigator.sendBeacon`, which cannot set headers.
 * The two hot-path schemas are `z.compile`d: zod generates a specialized validator for them (measured here: 2-3×
 * faster parses), and falls back to its runtime parser on a failure, so errors read exactly the same.
 */
export const IngestBatchSchema = z.compile(
  z.object({
    key: z.string().max(200).optional(),
    /** Optional client batch id; when absent ingest derives one from the event ids so retries dedupe. */
    batch_id: Uuid().optional(),
    session_id: z.string().min(1).max(128),
    sent_at: Timestamp,
    context: IngestContextSchema,
    events: z.array(IngestEventSchema).min(1).max(MAX_EVENTS_PER_BATCH),
  }),
);
export type IngestBatch = z.infer<typeof IngestBatchSchema>;

/** An event as it travels on the stream: ts normalized to epoch ms. */
export const StreamEventSchema = z.object({
  id: Uuid(),
  type: z.enum(EVENT_TYPES),
  ts: z.number().int(),
  page: z.string(),
  signal: z.string().optional(),
  name: z.string().optional(),
  selector: z.string().optional(),
  label: z.string().optional(),
  x: z.number().int().optional(),
  y: z.number().int().optional(),
  vx: z.number().int().optional(),
  vy: z.number().int().optional(),
  px: z.number().int().optional(),
  py: z.number().int().optional(),
  value: z.number().optional(),
  meta: z.record(z.string(), z.unknown()).optional(),
});
export type StreamEvent = z.infer<typeof StreamEventSchema>;

/** One accepted SDK batch on subject `events.v1.<partition>.<siteId>`; Nats-Msg-Id is `batch_id`. */
export const EventBatchMessageSchema = z.compile(
  z.object({
    v: z.literal(1),
    batch_id: z.string().min(1),
    org_id: Uuid(),
    site_id: Uuid(),
    received_at: z.number().int(),
    session_id: z.string(),
    context: IngestContextSchema,
    events: z.array(StreamEventSchema).min(1),
  }),
);
export type EventBatchMessage = z.infer<typeof EventBatchMessageSchema>;
