import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import test from 'ava';
import { scalarPackageBundle, VENDORED_SCALAR } from './update.ts';

// The vendored docs bundle is the devDependency's, byte for byte: upgrading the package without running
// `node api/openapi/vendor/update.ts` (or editing the file by hand) fails here.
test('the vendored Scalar bundle is the installed @scalar/api-reference bundle', (t) => {
  const vendored = gunzipSync(readFileSync(VENDORED_SCALAR));
  const packaged = readFileSync(scalarPackageBundle());
  t.is(vendored.length, packaged.length);
  t.true(vendored.equals(packaged));
});
