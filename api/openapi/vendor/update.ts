/**
 * Refreshes the vendored Scalar bundle from the @scalar/api-reference devDependency:
 *   node api/openapi/vendor/update.ts      (after `npm install -D @scalar/api-reference@<version>`)
 * The docs page needs only this one browser file; installing the package at run time would bring Vue, its
 * editor and their dependencies into every production install. Stored gzipped (level 9): the form served to
 * every browser that accepts gzip. api/openapi/vendor/scalar.test.ts checks it matches the devDependency.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

export const VENDORED_SCALAR = new URL('./scalar-standalone.js.gz', import.meta.url);

/** The package's browser bundle (not in its exports map: found beside its main entry). */
export const scalarPackageBundle = (): URL => new URL('./browser/standalone.js', import.meta.resolve('@scalar/api-reference'));

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const plain = readFileSync(scalarPackageBundle());
  writeFileSync(VENDORED_SCALAR, gzipSync(plain, { level: 9 }));
  process.stdout.write(`${VENDORED_SCALAR.pathname}: ${plain.length} bytes, gzipped\n`);
}
