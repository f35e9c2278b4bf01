/**
 * Test-only: the one way tests wait. The machine is busy (two cores, other test files beside this one), so tests
 * wait for a condition, never for a fixed time.
 */

export interface EventuallyOptions {
  /** How long to keep trying (default 20 s). */
  timeoutMs?: number;
  /** Pause between tries (default 50 ms). */
  stepMs?: number;
  /** What is awaited, for the timeout message. */
  what?: string;
}

/**
 * Polls `check` until it returns a truthy value, which it resolves to. A try that throws counts as not yet (a
 * server still starting refuses connections); the last error is named in the timeout message.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  { timeoutMs = 20_000, stepMs = 50, what = 'condition' }: EventuallyOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      if (err instanceof GiveUp) throw err.cause;
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`,
      );
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** Thrown by a check that knows waiting longer cannot help (the process it waits on exited): fails at once. */
export class GiveUp extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause });
  }
}
