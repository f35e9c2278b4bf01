/**
 * @friction/sdk: the Friction browser SDK. Detects rage clicks, dead clicks, disabled-element attempts, form
 * abandonment and restarts, errors shown to the visitor and navigation loops, and sends them to a Friction
 * service. Every call is safe to make anywhere (SSR included): it never throws into the page.
 *
 * ingest/sdk/declarations.check.ts keeps these declarations and the implementation in step.
 */

/** A conversion declared up front: reaching `page` (exact, or a prefix when it ends in `*`) or clicking `selector`. */
export interface ConversionRule {
  /** Name of the conversion (default `conversion`). */
  name?: string;
  page?: string;
  selector?: string;
  /** Its value, 0 to 1e12 (for revenue). */
  value?: number;
}

/** Options of `init()`. Only `key` and `endpoint` are required. */
export interface FrictionOptions {
  /** Publishable key of the site, `svc_pub_…` (safe in a page). A secret key is refused. */
  key: string;
  /** Base URL of the Friction ingest service, e.g. `https://friction.example.com`; the SDK posts to `{endpoint}/v1/ingest`. */
  endpoint: string;
  /** `production` (default) or `staging`; also selects which remote config the SDK loads. */
  environment?: string;
  /** The build this page runs (≤ 64 chars): associates sessions with deploys. Default: the remote config's `segment.app_version`. */
  appVersion?: string;
  /** Fraction of sessions recorded, 0..1 (default 1), decided once per session. Multiplied by the remote config's `sample_rate`. */
  sampleRate?: number;
  /** CSS selectors whose elements (and descendants) never produce signals. Added to the remote config's `ignore_selectors`. */
  ignore?: string[];
  /** Conversions recorded automatically. */
  conversions?: ConversionRule[];
  /** Milliseconds between flushes of page views and custom events (default 5000, at least 250). Friction signals leave within 1 s. */
  flushInterval?: number;
}

/** Primitive properties of a custom event or conversion (at most 32 keys; strings cut at 256 chars). */
export type Meta = Record<string, string | number | boolean | null | undefined>;

/** Counters for debugging and tests. */
export interface FrictionStats {
  version: string;
  /** Whether this session is recorded (page sample rate × remote sample rate). */
  sampled: boolean;
  /** Events waiting to be sent. */
  queued: number;
  /** A batch is on its way (or waiting to be retried). */
  inflight: boolean;
  /** Detections still inside their time window. */
  pending: number;
  sent?: number;
  batches?: number;
  dropped?: number;
  retries?: number;
  rejected?: number;
  /** Errors the SDK caught inside itself. */
  errors: number;
  lastError: unknown;
}

/** The SDK version (package version and a hash of the build). */
export declare const version: string;
/**
 * Starts the SDK: loads the site's remote config (`GET {endpoint}/v1/sdk-config`), then records. Returns whether
 * it started (false: bad options, not a browser, already started; undefined only after an internal error).
 */
export declare function init(options: FrictionOptions): boolean | undefined;
/** A custom event: `name` (1..128 chars) and primitive props. */
export declare function track(name: string, props?: Meta): void;
/** A conversion, with its value (0..1e12) when it has one; `props.name` names it. */
export declare function conversion(value?: number, props?: Meta): void;
/** Sets the visitor's anonymous id (never an email address: refused). */
export declare function identify(anonymousId: string): void;
/** Sends everything queued now. */
export declare function flush(): void;
/** The visitor declines: recording stops at once (queued events dropped) and stays off in this tab until optIn(). */
export declare function optOut(): void;
/** The visitor consents again: recording starts with the next page load. */
export declare function optIn(): void;
export declare function stats(): FrictionStats | undefined;

declare const Friction: {
  init: typeof init;
  track: typeof track;
  conversion: typeof conversion;
  identify: typeof identify;
  flush: typeof flush;
  stats: typeof stats;
  version: string;
  optOut: typeof optOut;
  optIn: typeof optIn;
};
export default Friction;
