import { SIGNAL_CATALOG } from './signal-catalog.ts';

/**
 * What the Explorer calls a confused session and a session's source, shared by its raw query path, its reference
 * evaluator and the processor's session rollup (processor/store/rollups.store.ts), so the three cannot drift apart.
 */

/** Signal types that make a session confused: every catalogued (weighted) type, as /query/insights counts them. */
export const CONFUSING_SIGNALS: readonly string[] = SIGNAL_CATALOG.filter((d) => d.weight > 0).map((d) => d.type);

/** The fallback source of a session that sent none (as /query/insights names it). */
export const DIRECT_SOURCE = '(direct)';
