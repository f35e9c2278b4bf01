/**
 * Runs `fn` one run at a time. A call while a run is under way does not start a second one beside it: it waits for
 * the run, then every such caller shares ONE next run (a tick asked for during a tick sees that tick's result and
 * runs once more, however many asked). So ticks never overlap and never queue up behind a slow one.
 */
export function singleFlight(fn: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const start = (): Promise<void> => {
    running = fn().finally(() => {
      running = undefined;
    });
    return running;
  };
  return () => {
    if (!running) return start();
    next ??= running
      .catch(() => {})
      .then(() => {
        next = undefined;
        return start();
      });
    return next;
  };
}

/**
 * Calls `tick` every `everyMs` measured from the end of the previous one (a setTimeout chain, not setInterval: a
 * tick longer than the interval delays the next instead of overlapping it). Returns a stop function.
 */
export function scheduleTicks(tick: () => Promise<void>, everyMs: number, onError: (err: unknown) => void): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      tick().catch(onError).finally(arm);
    }, everyMs);
    timer.unref();
  };
  arm();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
