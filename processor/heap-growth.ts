import v8 from 'node:v8';

/**
 * Sets how far V8 lets the old generation grow past what survived its last full collection before it collects
 * again (1 + percent / 100; 0 leaves V8's own factor). V8 reads the flag at every full collection, so setting it
 * once the process runs takes effect from the next one (the engine bench measures it set this way). It applies to
 * the whole process: in `friction start` that is every role, whose heap the processor's state dominates.
 */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
