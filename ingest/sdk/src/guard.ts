/**
 * The SDK runs inside other people's pages: nothing it does may throw into them. Every listener,
 * timer, patch hook and public call goes through guard(); failures are counted (stats().errors) so
 * tests can still see them.
 */
export const health = { errors: 0, lastError: '' as unknown };

export const guard = <A extends unknown[], R>(fn: (...args: A) => R): ((...args: A) => R | undefined) => {
  return function (this: unknown, ...args: A): R | undefined {
    try {
      return fn.apply(this, args);
    } catch (err) {
      health.errors++;
      // Kept as thrown (not stringified: a hostile object's toString could throw here too).
      health.lastError = err;
      return undefined;
    }
  };
};
