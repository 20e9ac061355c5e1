// Per-item progress of a cluster inference job, kept in the caller's bucket beside the job's folder so that a Pod that
// crashes (or a node that disappears) loses nothing finished: `<token>/<session>/.flowpilot-inference/<task id>/`
// holds `inputs.json` (the inputs as first loaded), `items/<index>.json` (one committed outcome per item),
// `result-stem.json` (the result files' stem, fixed before the first write) and `parts/<n>.json` (the items flushed to
// partial JSONL part n, written after the part). It is deleted once the job is final. The cluster job channel
// (channel.ts) reads and writes it.
import type { Client } from 'minio';
import type { ItemOutcome } from '../db.js';
import { unreachable, writeJson } from '../storage.js';

export const CHECKPOINT_DIR = '.flowpilot-inference';

export interface StoredOutcome extends ItemOutcome { index: number; pod?: string; finished: string }

const codeOf = (e: unknown): string => String((e as { code?: string }).code ?? '');

export class BucketCheckpoint {
  readonly prefix: string;

  constructor(private client: Client, private bucket: string, folder: string, taskId: string) {
    this.prefix = `${folder}/${CHECKPOINT_DIR}/${taskId}/`;
  }

  private async read<T>(name: string): Promise<T | undefined> {
    try {
      const chunks: Buffer[] = [];
      for await (const c of await this.client.getObject(this.bucket, this.prefix + name)) chunks.push(c as Buffer);
      return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
    } catch (e) {
      const code = codeOf(e);
      if (code === 'NoSuchKey' || code === 'NotFound') return undefined;
      throw unreachable(this.bucket, e);
    }
  }

  inputs(): Promise<unknown[] | undefined> { return this.read<unknown[]>('inputs.json'); }
  saveInputs(inputs: unknown[]): Promise<void> { return writeJson(this.client, this.bucket, `${this.prefix}inputs.json`, inputs); }

  /** The fixed stem; a checkpoint of an earlier version holds the result file's key (`result-key.json`) instead. */
  async resultStem(): Promise<string | undefined> {
    const stem = (await this.read<{ stem: string }>('result-stem.json'))?.stem;
    if (stem) return stem;
    const key = (await this.read<{ key: string }>('result-key.json'))?.key;
    return key?.slice(key.lastIndexOf('/') + 1).replace(/\.json$/, '');
  }
  saveResultStem(stem: string): Promise<void> { return writeJson(this.client, this.bucket, `${this.prefix}result-stem.json`, { stem }); }

  savePart(part: number, idxs: number[]): Promise<void> { return writeJson(this.client, this.bucket, `${this.prefix}parts/${part}.json`, { part, idxs }); }

  /** The flushed parts: part number -> item indexes. */
  async parts(): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>();
    for (const p of await this.readAll<{ part: number; idxs: number[] }>('parts/')) {
      if (Number.isInteger(p.part) && Array.isArray(p.idxs)) out.set(p.part, p.idxs);
    }
    return out;
  }

  saveItem(o: StoredOutcome): Promise<void> { return writeJson(this.client, this.bucket, `${this.prefix}items/${o.index}.json`, o); }

  /** Every committed item outcome, by index. */
  async items(): Promise<Map<number, StoredOutcome>> {
    const out = new Map<number, StoredOutcome>();
    for (const o of await this.readAll<StoredOutcome>('items/')) if (Number.isInteger(o.index)) out.set(o.index, o);
    return out;
  }

  /** Every object under `sub` of the checkpoint, parsed (16 reads at a time). */
  private async readAll<T>(sub: string): Promise<T[]> {
    const names: string[] = [];
    try {
      for await (const o of this.client.listObjectsV2(this.bucket, `${this.prefix}${sub}`, true)) {
        const n = (o as { name?: string }).name;
        if (n) names.push(n.slice(this.prefix.length));
      }
    } catch (e) { throw unreachable(this.bucket, e); }
    const out: T[] = [];
    for (let i = 0; i < names.length; i += 16) {
      for (const o of await Promise.all(names.slice(i, i + 16).map((n) => this.read<T>(n)))) if (o) out.push(o);
    }
    return out;
  }

  /** Removes the checkpoint (best effort: a leftover only costs space; the result file is the job's record). */
  async remove(): Promise<void> {
    try {
      const names: string[] = [];
      for await (const o of this.client.listObjectsV2(this.bucket, this.prefix, true)) {
        const n = (o as { name?: string }).name;
        if (n) names.push(n);
      }
      for (let i = 0; i < names.length; i += 1000) await this.client.removeObjects(this.bucket, names.slice(i, i + 1000));
    } catch { /* left for a later cleanup */ }
  }
}
