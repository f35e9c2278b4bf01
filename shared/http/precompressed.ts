import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import { cachedOr, diskCache } from '../disk-cache.ts';

/** One file in the three content codings a browser may ask for, compressed once when the process starts. */
export interface Precompressed {
  identity: Buffer;
  gzip: Buffer;
  br: Buffer;
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);
/**
 * Brotli at quality 11 costs about 0.15 s of CPU for the dashboard's files at every api start (and every test stack),
 * for bytes that only change when the files do: the codings are kept on disk under a hash of the bytes, the
 * settings and the compressors' versions.
 */
const cache = diskCache('friction-precompressed');

/** `body` as is, gzipped (level 9) and brotli-compressed (quality 11; `text` tells brotli it is text). */
export async function precompress(body: Buffer, { text = false } = {}): Promise<Precompressed> {
  const [gz, br] = await Promise.all([
    cachedOr(cache, ['gzip 9', process.versions.zlib, body], () => gzipAsync(body, { level: 9 })),
    cachedOr(cache, [`br 11 ${text ? 'text' : 'generic'}`, process.versions.brotli ?? '', body], () =>
      brotliAsync(body, {
        params: {
          [zlib.BROTLI_PARAM_QUALITY]: 11,
          [zlib.BROTLI_PARAM_MODE]: text ? zlib.BROTLI_MODE_TEXT : zlib.BROTLI_MODE_GENERIC,
          [zlib.BROTLI_PARAM_SIZE_HINT]: body.length,
        },
      }),
    ),
  ]);
  return { identity: body, gzip: gz, br };
}
