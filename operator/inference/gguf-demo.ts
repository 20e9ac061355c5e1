// Deterministic generator of a tiny llama-architecture GGUF with random F32 weights and a
// SentencePiece-style vocabulary with byte fallback: the "demo-random-weights" model that exercises the real
// node-llama-cpp load/tokenize/batch/grammar path where no real weights can be downloaded. Its text is gibberish.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, openSync, closeSync, writeSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { prng } from '../core/prng.js';

export interface DemoModelShape {
  embedding: number;
  layers: number;
  heads: number;
  feedForward: number;
  contextLength: number;
  seed: number;
}

export const DEFAULT_DEMO_SHAPE: DemoModelShape = {
  embedding: 128, layers: 2, heads: 4, feedForward: 256, contextLength: 2048, seed: 42,
};

/** The backend label every result produced by this model carries. */
export const DEMO_BACKEND_LABEL = 'demo-random-weights';

const WORDS = (
  'the of and to in is that it for on with as was at by be this from or an are not but have you they ' +
  'which one all were we when there can more if will about what so their out up other into time some could ' +
  'good bad great poor price brand market sales lead customer product service news report media social ' +
  'positive negative neutral review growth risk company team value quality support launch deal offer yes no'
).split(' ');
const SPM_SPACE = '\u2581';

/** Token types of the GGUF tokenizer metadata. */
const TOKEN_NORMAL = 1, TOKEN_UNKNOWN = 2, TOKEN_CONTROL = 3, TOKEN_BYTE = 6;

export interface DemoVocab { tokens: string[]; scores: number[]; types: number[] }

/** `<unk> <s> </s>`, 256 byte tokens, printable ASCII characters, then whole words with the SPM space mark. */
export function buildDemoVocab(): DemoVocab {
  const tokens: string[] = ['<unk>', '<s>', '</s>'];
  const types = [TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_CONTROL];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(TOKEN_BYTE);
  }
  const pieces = new Set<string>();
  pieces.add(SPM_SPACE);
  for (let c = 33; c < 127; c++) pieces.add(String.fromCharCode(c));
  // SPM merges bigram by bigram, so every prefix of a word piece must be a piece too.
  for (const w of WORDS) {
    for (const word of [SPM_SPACE + w, w]) for (let k = 2; k <= word.length; k++) pieces.add(word.slice(0, k));
  }
  for (const p of pieces) { tokens.push(p); types.push(TOKEN_NORMAL); }
  // Longer pieces score higher so the SPM merge loop prefers them; specials and bytes score 0.
  const scores = tokens.map((t, i) => (types[i] === TOKEN_NORMAL ? -1000 + t.length * 10 - i / 10_000 : 0));
  return { tokens, scores, types };
}

// ---- GGUF v3 serialisation ----
const T_U32 = 4, T_I32 = 5, T_F32 = 6, T_BOOL = 7, T_STRING = 8, T_ARRAY = 9;
type KV = [string, number, unknown, number?];

class Writer {
  chunks: Buffer[] = [];
  size = 0;
  push(b: Buffer): void { this.chunks.push(b); this.size += b.length; }
  u32(v: number): void { const b = Buffer.alloc(4); b.writeUInt32LE(v); this.push(b); }
  i32(v: number): void { const b = Buffer.alloc(4); b.writeInt32LE(v); this.push(b); }
  u64(v: number): void { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); this.push(b); }
  f32(v: number): void { const b = Buffer.alloc(4); b.writeFloatLE(v); this.push(b); }
  str(s: string): void { const b = Buffer.from(s, 'utf8'); this.u64(b.length); this.push(b); }
  value(type: number, v: unknown, elemType?: number): void {
    if (type === T_U32) this.u32(v as number);
    else if (type === T_I32) this.i32(v as number);
    else if (type === T_F32) this.f32(v as number);
    else if (type === T_BOOL) this.push(Buffer.from([v ? 1 : 0]));
    else if (type === T_STRING) this.str(v as string);
    else if (type === T_ARRAY) {
      const arr = v as unknown[];
      this.u32(elemType!); this.u64(arr.length);
      for (const e of arr) this.value(elemType!, e);
    } else throw new Error(`unsupported gguf type ${type}`);
  }
}

interface TensorSpec { name: string; dims: number[]; init: 'ones' | 'random'; scale: number }

function tensorSpecs(s: DemoModelShape, vocab: number): TensorSpec[] {
  const e = s.embedding, f = s.feedForward, r = (name: string, dims: number[], scale: number): TensorSpec =>
    ({ name, dims, init: 'random', scale });
  const specs: TensorSpec[] = [
    r('token_embd.weight', [e, vocab], 1),
    { name: 'output_norm.weight', dims: [e], init: 'ones', scale: 1 },
    r('output.weight', [e, vocab], 1.5 / Math.sqrt(e)),
  ];
  for (let i = 0; i < s.layers; i++) {
    specs.push(
      { name: `blk.${i}.attn_norm.weight`, dims: [e], init: 'ones', scale: 1 },
      r(`blk.${i}.attn_q.weight`, [e, e], 1 / Math.sqrt(e)),
      r(`blk.${i}.attn_k.weight`, [e, e], 1 / Math.sqrt(e)),
      r(`blk.${i}.attn_v.weight`, [e, e], 1 / Math.sqrt(e)),
      r(`blk.${i}.attn_output.weight`, [e, e], 1 / Math.sqrt(e)),
      { name: `blk.${i}.ffn_norm.weight`, dims: [e], init: 'ones', scale: 1 },
      r(`blk.${i}.ffn_gate.weight`, [e, f], 1 / Math.sqrt(e)),
      r(`blk.${i}.ffn_up.weight`, [e, f], 1 / Math.sqrt(e)),
      r(`blk.${i}.ffn_down.weight`, [f, e], 1 / Math.sqrt(f)),
    );
  }
  return specs;
}

function metadata(s: DemoModelShape, v: DemoVocab): KV[] {
  return [
    ['general.architecture', T_STRING, 'llama'],
    ['general.name', T_STRING, DEMO_BACKEND_LABEL],
    ['general.alignment', T_U32, 32],
    ['llama.context_length', T_U32, s.contextLength],
    ['llama.embedding_length', T_U32, s.embedding],
    ['llama.block_count', T_U32, s.layers],
    ['llama.feed_forward_length', T_U32, s.feedForward],
    ['llama.rope.dimension_count', T_U32, s.embedding / s.heads],
    ['llama.attention.head_count', T_U32, s.heads],
    ['llama.attention.head_count_kv', T_U32, s.heads],
    ['llama.attention.layer_norm_rms_epsilon', T_F32, 1e-5],
    ['llama.vocab_size', T_U32, v.tokens.length],
    ['tokenizer.ggml.model', T_STRING, 'llama'],
    ['tokenizer.ggml.tokens', T_ARRAY, v.tokens, T_STRING],
    ['tokenizer.ggml.scores', T_ARRAY, v.scores, T_F32],
    ['tokenizer.ggml.token_type', T_ARRAY, v.types, T_I32],
    ['tokenizer.ggml.unknown_token_id', T_U32, 0],
    ['tokenizer.ggml.bos_token_id', T_U32, 1],
    ['tokenizer.ggml.eos_token_id', T_U32, 2],
    ['tokenizer.ggml.add_bos_token', T_BOOL, true],
    ['tokenizer.ggml.add_eos_token', T_BOOL, false],
  ];
}

const align = (n: number, a: number): number => Math.ceil(n / a) * a;

/** Writes the demo GGUF to `path` (atomically, through a temporary file). Same shape => same bytes. */
export function writeDemoGguf(path: string, shape: DemoModelShape = DEFAULT_DEMO_SHAPE): void {
  const vocab = buildDemoVocab();
  const specs = tensorSpecs(shape, vocab.tokens.length);
  const kvs = metadata(shape, vocab);
  const head = new Writer();
  head.push(Buffer.from('GGUF', 'ascii'));
  head.u32(3); head.u64(specs.length); head.u64(kvs.length);
  for (const [key, type, value, elem] of kvs) { head.str(key); head.u32(type); head.value(type, value, elem); }
  let offset = 0;
  const offsets: number[] = [];
  for (const t of specs) {
    head.str(t.name); head.u32(t.dims.length);
    for (const d of t.dims) head.u64(d);
    head.u32(0); // GGML_TYPE_F32
    offsets.push(offset); head.u64(offset);
    offset = align(offset + 4 * t.dims.reduce((a, b) => a * b, 1), 32);
  }
  const tmp = `${path}.${process.pid}.tmp`;
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(tmp, 'w');
  try {
    const headBuf = Buffer.concat(head.chunks);
    writeSync(fd, headBuf);
    writeSync(fd, Buffer.alloc(align(headBuf.length, 32) - headBuf.length));
    const rand = prng(shape.seed);
    let written = 0;
    specs.forEach((t, i) => {
      if (written < offsets[i]) { writeSync(fd, Buffer.alloc(offsets[i] - written)); written = offsets[i]; }
      const n = t.dims.reduce((a, b) => a * b, 1);
      const data = new Float32Array(n);
      for (let k = 0; k < n; k++) data[k] = t.init === 'ones' ? 1 : (rand() * 2 - 1) * t.scale * Math.sqrt(3);
      writeSync(fd, Buffer.from(data.buffer));
      written += 4 * n;
    });
  } finally { closeSync(fd); }
  renameSync(tmp, path);
}

/** Deterministic file name for a shape, so a cache never serves a model of another shape. */
export function demoModelFileName(shape: DemoModelShape = DEFAULT_DEMO_SHAPE): string {
  const h = createHash('sha256').update(JSON.stringify(shape)).update('v2').digest('hex').slice(0, 12);
  return `demo-random-weights-${h}.gguf`;
}

/** Returns the path of the cached demo GGUF in `dir` (default: os.tmpdir()), generating it when missing. */
export function ensureDemoModel(dir: string = join(tmpdir(), 'flowpilot-models'), shape = DEFAULT_DEMO_SHAPE): string {
  const path = join(dir, demoModelFileName(shape));
  if (!existsSync(path)) writeDemoGguf(path, shape);
  return path;
}
