// Bounded streaming unzip of an uploaded archive (fflate): entries inflate as the bytes arrive and the caller's checks
// run as each entry starts and on each inflated chunk, so a zip bomb stops at the caller's limit. Folders are skipped.
import { Unzip, UnzipInflate, type UnzipFile } from 'fflate';

export interface UnzipChecks {
  /** An entry starts (its name as written in the archive): throw to refuse the archive. */
  entry(name: string): void;
  /** `n` more inflated bytes of entry `name`: throw to refuse the archive. */
  bytes(name: string, n: number): void;
  /** The error of a malformed archive. */
  invalid(message: string): Error;
}

/** The archive's files in order, and how many entries it held (folders included). */
export async function unzipBounded(stream: AsyncIterable<Uint8Array>, checks: UnzipChecks): Promise<{ files: { name: string; data: Buffer }[]; seen: number }> {
  const files: { name: string; data: Buffer }[] = [];
  let failure: Error | undefined;
  let seen = 0;
  let pending = 0;
  const fail = (e: unknown): void => { failure ??= e instanceof Error ? e : new Error(String(e)); };
  const unzip = new Unzip((file: UnzipFile) => {
    seen++;
    if (failure || file.name.endsWith('/')) return;
    try { checks.entry(file.name); } catch (e) { fail(e); return; }
    const chunks: Buffer[] = [];
    pending++;
    file.ondata = (err, data, final) => {
      if (failure) return;
      if (err) { fail(checks.invalid(`Invalid zip entry '${file.name}': ${err.message}`)); return; }
      try { checks.bytes(file.name, data.length); } catch (e) { fail(e); file.terminate(); return; }
      chunks.push(Buffer.from(data));
      if (final) { files.push({ name: file.name, data: Buffer.concat(chunks) }); pending--; }
    };
    file.start();
  });
  unzip.register(UnzipInflate);
  try {
    for await (const c of stream) {
      unzip.push(c instanceof Buffer ? c : Buffer.from(c));
      if (failure) break;
    }
    if (!failure) unzip.push(new Uint8Array(0), true);
  } catch (err) {
    fail(checks.invalid(`Invalid zip file: ${(err as Error).message}`));
  }
  if (failure) throw failure;
  if (pending !== 0) throw checks.invalid('Invalid zip file: an entry is truncated');
  return { files, seen };
}
