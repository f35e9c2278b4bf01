/**
 * Text PostgreSQL cannot store: the NUL character (refused in `text` and `jsonb`, also as the JSON escape
 * `\u0000` inside jsonb) and UTF-16 surrogates without their pair (not encodable as UTF-8).
 */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** True when `s` holds a NUL or a lone surrogate (see above). */
export function hasUnstorableText(s: string): boolean {
  return UNSTORABLE.test(s);
}

/** `s` with every NUL and lone surrogate replaced by U+FFFD, so it can always be stored (dead letters, logs). */
export function toStorableText(s: string): string {
  return UNSTORABLE.test(s) ? s.replace(UNSTORABLE_ALL, '\uFFFD') : s;
}

/** Cheap pre-check: every unstorable character is in this class, and nearly no real string has one. */
const SUSPECT = /[\u0000\uD800-\uDFFF]/;

/** A problem found in a parsed JSON document, with the path in the style of validation details (`events[3].label`). */
export interface JsonProblem {
  path: string;
  message: string;
}

interface Frame {
  value: object;
  depth: number;
  parent: Frame | undefined;
  key: string | number | undefined;
}

function pathOf(frame: Frame | undefined, last?: string | number): string {
  const parts: (string | number)[] = last === undefined ? [] : [last];
  for (let f = frame; f && f.key !== undefined; f = f.parent) parts.push(f.key);
  let out = '';
  for (let i = parts.length - 1; i >= 0; i--) {
    const p = parts[i];
    out += typeof p === 'number' ? `[${p}]` : out === '' ? p : `.${p}`;
  }
  return out;
}

/**
 * scanJson's step for one member of `frame`'s container: an unstorable string is the problem (or, with `replace`,
 * rewritten in place); a nested container is pushed on `stack` to be walked.
 */
function scanMember<K extends string | number>(
  container: Record<K, unknown>,
  key: K,
  frame: Frame,
  stack: Frame[],
  replace: boolean | undefined,
): JsonProblem | undefined {
  const item = container[key];
  if (typeof item === 'string') {
    if (SUSPECT.test(item) && hasUnstorableText(item)) {
      if (!replace)
        return { path: pathOf(frame, key), message: 'contains a NUL character or an unpaired UTF-16 surrogate' };
      container[key] = toStorableText(item);
    }
  } else if (item !== null && typeof item === 'object')
    stack.push({ value: item, depth: frame.depth + 1, parent: frame, key });
  return undefined;
}

/**
 * Walks a parsed JSON value without recursion (a hostile body may nest thousands of levels, which would overflow
 * the stack of any recursive check, of `JSON.stringify`, or of the database's jsonb parser) and returns the first
 * problem: nesting deeper than `maxDepth` (the root container is level 1), or, unless `replace` is set, a string
 * or key the database cannot store. With `replace`, such strings and keys are rewritten in place with U+FFFD.
 */
export function scanJson(root: unknown, opts: { maxDepth: number; replace?: boolean }): JsonProblem | undefined {
  if (typeof root === 'string') {
    if (SUSPECT.test(root) && hasUnstorableText(root) && !opts.replace)
      return { path: '', message: 'contains a NUL character or an unpaired UTF-16 surrogate' };
    return undefined;
  }
  if (root === null || typeof root !== 'object') return undefined;
  const stack: Frame[] = [{ value: root, depth: 1, parent: undefined, key: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.depth > opts.maxDepth)
      return { path: pathOf(frame), message: `nests deeper than ${opts.maxDepth} levels` };
    const v = frame.value as Record<string, unknown> | unknown[];
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const problem = scanMember(v, i, frame, stack, opts.replace);
        if (problem) return problem;
      }
    } else {
      for (const k of Object.keys(v)) {
        let key = k;
        if (SUSPECT.test(k) && hasUnstorableText(k)) {
          if (!opts.replace)
            return {
              path: pathOf(frame, toStorableText(k)),
              message: 'this key contains a NUL character or an unpaired UTF-16 surrogate',
            };
          key = toStorableText(k);
          v[key] = v[k];
          delete v[k];
        }
        const problem = scanMember(v, key, frame, stack, opts.replace);
        if (problem) return problem;
      }
    }
  }
  return undefined;
}

/**
 * Depth and JSON length of a value, computed without recursion and giving up (`tooBig`) as soon as either passes
 * its limit, so a hostile value costs no more than the limits. Length counts what `JSON.stringify` would write,
 * approximately for escapes (at least the real length: strings are counted by their own `JSON.stringify`).
 */
export function measureJson(
  root: unknown,
  limits: { maxDepth: number; maxChars: number },
): { depth: number; chars: number; tooDeep: boolean; tooLong: boolean } {
  let chars = 0;
  let depth = 0;
  const stack: { v: unknown; d: number }[] = [{ v: root, d: 0 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop()!;
    if (v === null || typeof v !== 'object') {
      chars += typeof v === 'string' ? JSON.stringify(v).length : v === undefined ? 0 : String(v).length;
    } else {
      const level = d + 1;
      if (level > depth) depth = level;
      if (level > limits.maxDepth) return { depth, chars, tooDeep: true, tooLong: false };
      if (Array.isArray(v)) {
        chars += 2 + Math.max(0, v.length - 1);
        for (const item of v) stack.push({ v: item, d: level });
      } else {
        const keys = Object.keys(v);
        chars += 2 + Math.max(0, keys.length - 1);
        for (const k of keys) {
          chars += JSON.stringify(k).length + 1;
          stack.push({ v: (v as Record<string, unknown>)[k], d: level });
        }
      }
    }
    if (chars > limits.maxChars) return { depth, chars, tooDeep: false, tooLong: true };
  }
  return { depth, chars, tooDeep: false, tooLong: false };
}
