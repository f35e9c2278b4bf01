/**
 * Reads the plain ustar archives PGlite writes and ships (its data-directory dumps, its extension bundles): regular
 * files and directories with names of at most 100 bytes. Anything else is refused rather than misread.
 */

export interface TarEntry {
  name: string;
  /** '0' a regular file, '5' a directory. */
  type: 'file' | 'directory';
  /** Seconds since the epoch, 0 when the header has none. */
  mtime: number;
  data: Buffer;
  /** The entry as it stands in the archive (header and padded data), to copy it into another archive unchanged. */
  raw: Buffer;
}

/** A NUL-terminated field of a tar header. */
const field = (header: Buffer, at: number, length: number): string => {
  const end = header.indexOf(0, at);
  return header.toString('latin1', at, end === -1 || end > at + length ? at + length : end);
};

/** The entries of an uncompressed tar, in order. */
export function* tarEntries(tar: Buffer): Generator<TarEntry> {
  for (let at = 0; at + 512 <= tar.length; ) {
    const header = tar.subarray(at, at + 512);
    const name = field(header, 0, 100);
    if (name === '') return; // the zero blocks that end the archive
    const size = Number.parseInt(field(header, 124, 12) || '0', 8);
    const mtime = Number.parseInt(field(header, 136, 12) || '0', 8);
    const flag = header[156];
    const end = at + 512 + Math.ceil(size / 512) * 512;
    if (end > tar.length) throw new Error(`the archive ends inside its entry ${name}`);
    const common = { name, mtime, data: tar.subarray(at + 512, at + 512 + size), raw: tar.subarray(at, end) };
    if (flag === 0x35 /* '5' */) yield { ...common, type: 'directory' };
    else if (flag === 0x30 /* '0' */ || flag === 0) yield { ...common, type: 'file' };
    else throw new Error(`the archive holds an entry of tar type ${String.fromCharCode(flag)}: ${name}`);
    at = end;
  }
}

/** An archive of the given entries, each copied as it was, closed by the two zero blocks. */
export const tarOf = (entries: Iterable<TarEntry>): Buffer =>
  Buffer.concat([...[...entries].map((e) => e.raw), Buffer.alloc(1024)]);
