/**
 * Test-only: a resource the tests of one file share (a stack, a database, a browser), started once before them
 * and stopped after them, declared in one line instead of a `let` and two hooks.
 */
import type { TestFn } from 'ava';

/**
 * Registers a `before` hook that starts the resource and an `after.always` hook that stops it (also when another
 * hook or a test failed), and returns the object that stands for it: every read goes to the started resource (its
 * methods bound to it), so the tests use it as they would the resource itself. Reading it before the hook ran
 * throws. ava runs the hooks of one file concurrently, so several resources declared this way start side by side;
 * where one must stop before another, write the hooks by hand.
 */
export function useResource<T extends object, C>(
  test: TestFn<C>,
  start: () => Promise<T>,
  stop: (resource: T) => Promise<unknown> | unknown,
): T {
  let current: T | undefined;
  test.before(async () => {
    current = await start();
  });
  test.after.always(async () => {
    if (current) await stop(current);
  });
  return new Proxy({} as T, {
    get(_, key) {
      if (!current) throw new Error(`the test resource was read (${String(key)}) before its before hook started it`);
      const value: unknown = Reflect.get(current, key, current);
      return typeof value === 'function' ? value.bind(current) : value;
    },
  });
}
