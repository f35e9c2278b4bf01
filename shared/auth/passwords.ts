import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Password hashing with scrypt. The parameters travel inside each stored hash (`scrypt$N$r$p$salt$hash`,
 * base64url), so raising the cost later keeps every existing hash verifiable.
 */
const R = 8;
/** OWASP lists N=2^15, r=8, p=3 as equivalent to its scrypt minimum (N=2^17, p=1) with a quarter of the memory. */
const P = 3;
const KEY_LEN = 32;

function derive(password: string, salt: Buffer, opts: ScryptOptions): Promise<Buffer> {
  // maxmem must exceed 128 * N * r bytes, or node refuses the parameters.
  const maxmem = 256 * (opts.N ?? 16384) * (opts.r ?? 8) + 1024 * 1024;
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_LEN, { ...opts, maxmem }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/** Hashes a password with cost `n` (a power of two; PASSWORD_SCRYPT_N). Runs on the libuv pool, never the event loop. */
export async function hashPassword(password: string, n: number): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N: n, r: R, p: P });
  return ['scrypt', n, R, P, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** True when `password` matches `stored`; constant-time on the derived keys. A malformed hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number);
  if (![n, r, p].every((v) => Number.isInteger(v) && v > 0)) return false;
  const expected = Buffer.from(parts[5], 'base64url');
  const actual = await derive(password, Buffer.from(parts[4], 'base64url'), { N: n, r, p });
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/**
 * A hash of a random password at cost `n`, verified against when the email is unknown, so a login for a
 * missing account costs the same time as one with a wrong password (no account enumeration by timing).
 */
export function decoyHash(n: number): Promise<string> {
  return hashPassword(randomBytes(16).toString('hex'), n);
}
