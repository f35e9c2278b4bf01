/**
 * Every tunable of the SDK in one place. DETECTION.md explains each value and why it was chosen;
 * change the two together.
 */

// --- rage_click ---
/** Clicks in a burst before it counts as rage (PostHog and Datadog both use 3). */
export const RAGE_MIN_CLICKS = 3;
/** Largest gap between consecutive clicks of one burst (PostHog: 1000 ms; OS double-click is ~500 ms). */
export const RAGE_MAX_GAP_MS = 1000;
/** Largest distance from the previous click, in CSS px (PostHog: 30; Datadog: 100). */
export const RAGE_MAX_DISTANCE_PX = 30;

// --- rage_click and dead_click ---
/** A click this far from where its press went down ends a drag, not a click (OS drag thresholds are 4-10 px). */
export const DRAG_MIN_PX = 10;

// --- dead_click ---
/** How long a click on something interactive may go without any response (Datadog 100 ms, PostHog 2.5 s, Sentry 7 s). */
export const DEAD_WINDOW_MS = 2000;

// --- disabled_element_attempt ---
/** Repeated presses on the same disabled element within this gap are one attempt. */
export const DISABLED_REPEAT_MS = 1000;

// --- error_encounter ---
/** An alert or aria-invalid appearing this long after a user action is an error shown to that user. */
export const ERROR_ACTION_WINDOW_MS = 5000;
/** An uncaught exception this soon after a click is attributed to the clicked element. */
export const ERROR_CLICK_ATTRIBUTION_MS = 1000;
/** Error signals per page, so a render loop that throws every frame cannot flood the queue. */
export const MAX_ERRORS_PER_PAGE = 10;
/** Error-state signals (alerts, invalid fields) per user action. */
export const MAX_ERROR_STATES_PER_ACTION = 5;

// --- form_restart ---
/** Filled fields that must be found empty again before the next input counts as a restart. */
export const FORM_RESTART_MIN_CLEARED = 2;

/** After an SPA route change, how long the router gets to remove the old route's forms. */
export const FORM_ROUTE_SETTLE_MS = 1000;

// --- navigation_loop ---
/** Two full cycles must fit in this time (4 page views for A→B→A→B, i.e. ≤ 15 s a page). */
export const NAV_LOOP_WINDOW_MS = 60_000;
/** Longest cycle looked for (A→B→C→A→B→C). */
export const NAV_LOOP_MAX_CYCLE = 3;
/** Page views kept in the session for loop detection. */
export const NAV_HISTORY_MAX = 2 * NAV_LOOP_MAX_CYCLE;

// --- session ---
/** A session ends after this much inactivity (the analytics convention). */
export const SESSION_IDLE_MS = 30 * 60 * 1000;

// --- transport ---
/** Default time between flushes. */
export const FLUSH_INTERVAL_MS = 5000;
/** A batch holding a friction signal leaves within this time, whatever the interval. */
export const SIGNAL_FLUSH_MS = 1000;

/** Smallest flush interval accepted from config, to protect the ingest rate limit. */
export const MIN_FLUSH_INTERVAL_MS = 250;
/** A batch is sent as soon as this many events are queued, and never carries more. */
export const BATCH_MAX_EVENTS = 20;
/** Events kept while the endpoint is unreachable; beyond this the oldest are dropped and counted. */
export const MAX_QUEUE_EVENTS = 200;
/** Attempts per batch (first send + retries) before it is dropped. */
export const MAX_ATTEMPTS = 6;
/** Backoff without Retry-After: 1 s doubling to this cap, with jitter. */
export const MAX_BACKOFF_MS = 30_000;
/** Longest Retry-After honoured; a larger value is clamped so a page never waits forever. */
export const MAX_RETRY_AFTER_MS = 10 * 60 * 1000;
/** Largest beacon body: browsers refuse keepalive payloads over 64 KiB in flight. */
export const BEACON_MAX_BYTES = 60_000;

// --- payload limits (mirrors shared/contracts/ingest.ts) ---
export const MAX_LABEL_CHARS = 80;
export const MAX_SELECTOR_CHARS = 512;
export const MAX_META_JSON_CHARS = 2048;
export const MAX_MESSAGE_CHARS = 120;
