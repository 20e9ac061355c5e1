// The secret layer: sealing is bound to its execution and input, opening remembers the clear value for that execution
// only, records teach the layer their sealed inputs and parents, and the key comes from ENCRYPTION_KEY or a 0600 file.
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Execution, Input } from '../core/types.js';
import { sampleExecution, tempDir } from '../store/sqlite/test-fixtures.js';
import { embeddedBox, KEY_FILE, parseEncryptionKey } from './key.js';
import { SecretLayer } from './layer.js';
import { MASK } from './masker.js';
import { inputAad, isSealed, SecretBox } from './sealed.js';

const box = new SecretBox(randomBytes(32));
const DEFS: Input[] = [{ id: 'pw', type: 'SECRET' }, { id: 'many', type: 'ARRAY', itemType: 'SECRET' }, { id: 'name', type: 'STRING' }];
const layer = (values: string[] = []) => new SecretLayer({ values: () => values, box });
const exec = (id: string, inputs: Record<string, unknown>, extra: Partial<Execution> = {}): Execution => ({ ...sampleExecution(id), inputs, ...extra });

describe('SecretBox', () => {
  it('opens what it sealed with the same additional data only', () => {
    const sealed = box.seal('p4ssw0rd', 'a');
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).not.toContain('p4ssw0rd');
    expect(box.open(sealed, 'a')).toBe('p4ssw0rd');
    expect(box.open(sealed, 'b')).toBeUndefined();
    expect(new SecretBox(randomBytes(32)).open(sealed, 'a')).toBeUndefined();
    expect(box.open('fpenc1:garbage', 'a')).toBeUndefined();
    expect(box.seal('p4ssw0rd', 'a')).not.toBe(sealed); // a fresh IV each time
  });
});

describe('sealInputs', () => {
  it('seals SECRET values (and SECRET items), leaves other inputs without a known secret', () => {
    const l = layer();
    const e = exec('e1', { pw: 'p4ssw0rd', many: ['one1', 'two2'], name: 'plain name' });
    const sealed = l.sealInputs(e, DEFS);
    expect(isSealed(sealed.inputs.pw)).toBe(true);
    expect((sealed.inputs.many as string[]).every(isSealed)).toBe(true);
    expect(sealed.inputs.name).toBe('plain name');
    expect(box.open(sealed.inputs.pw as string, inputAad(e, 'pw'))).toBe('p4ssw0rd');
    expect(l.sealInputs(sealed, DEFS)).toBe(sealed); // already sealed for this execution: unchanged
  });

  it('a replay (same originalId) keeps the sealed value; a copy into another execution is sealed again', () => {
    const l = layer();
    const first = l.sealInputs(exec('e1', { pw: 'p4ssw0rd' }), DEFS);
    const replay = { ...first, id: 'e2' };
    expect(l.sealInputs(replay, DEFS).inputs.pw).toBe(first.inputs.pw);
    const copied = l.sealInputs(exec('e3', { pw: first.inputs.pw }), DEFS);
    expect(copied.inputs.pw).not.toBe(first.inputs.pw);
    expect(l.openInput(copied, 'pw', copied.inputs.pw)).toBe(first.inputs.pw); // the copy opens to the sealed text, never the clear one
  });

  it('without a key a SECRET input cannot be stored, and the error names the setting', () => {
    const l = new SecretLayer({ values: () => [] });
    expect(() => l.sealInputs(exec('e1', { pw: 'p4ssw0rd' }), DEFS)).toThrow(/ENCRYPTION_KEY/);
    expect(l.sealInputs(exec('e1', { name: 'x' }), DEFS).inputs).toEqual({ name: 'x' });
  });
});

describe('sealInputs: a known secret in any input is sealed, not masked, so tasks still read it', () => {
  const PW = 'db-Pa55word';
  const stored = (l: SecretLayer, e: Execution) => l.sealInputs(e, DEFS);
  const opened = (l: SecretLayer, e: Execution) => Object.fromEntries(Object.entries(e.inputs).map(([id, v]) => [id, l.openInput(e, id, v)]));

  it.each<[string, unknown]>([
    ['a STRING value', PW],
    ['a text holding it', `user:${PW}@host`],
    ['an item of a list', ['a-item', PW]],
    ['a nested JSON value', { db: { user: 'kestra', password: PW, port: 5432, tls: true, none: null } }],
    ['a JSON object key', { [PW]: 'granted' }],
    ['its base64 form', Buffer.from(PW).toString('base64')],
  ])('%s: stored without it, opened to the value given', (_name, value) => {
    const l = layer();
    l.remember('e1', [PW]); // a task declared it a credential (ctx.secrets.add)
    const e = exec('e1', { name: value, other: 'unrelated text' });
    const s = stored(l, e);
    expect(JSON.stringify(s.inputs)).not.toContain(PW);
    expect(JSON.stringify(s.inputs)).not.toContain(MASK);
    expect(s.inputs.other).toBe('unrelated text');
    expect(opened(l, s)).toEqual({ name: value, other: 'unrelated text' });
    expect(stored(l, s)).toBe(s); // sealed for this execution: unchanged on the next write
  });

  it('records sharing one inputs object (successive writes): a value declared between two writes is sealed at the next', () => {
    const l = layer();
    const first = exec('e1', { name: PW });
    expect(stored(l, first)).toBe(first); // nothing known yet: stored as given
    expect(stored(l, { ...first })).toEqual(first); // the same inputs, nothing new: unchanged (the walk is skipped)
    l.remember('e1', [PW]);
    const next = stored(l, { ...first, state: { ...first.state } });
    expect(isSealed(next.inputs.name)).toBe(true);
    expect(l.openInput(next, 'name', next.inputs.name)).toBe(PW);
  });

  it('numbers, booleans and short texts stay as they are; an input without a secret is the same object', () => {
    const l = layer();
    l.remember('e1', [PW]);
    const obj = { port: 5432, tls: true, user: 'kestra' };
    const s = stored(l, exec('e1', { obj, n: 7, ok: false }));
    expect(s.inputs.obj).toBe(obj);
    expect(s.inputs).toEqual({ obj, n: 7, ok: false });
  });

  it('a source secret (SECRET_<NAME>) given as an input is sealed too', () => {
    const l = layer(['global-s3cret']);
    const s = stored(l, exec('e1', { name: 'global-s3cret' }));
    expect(isSealed(s.inputs.name)).toBe(true);
    expect(l.openInput(s, 'name', s.inputs.name)).toBe('global-s3cret');
  });

  it('after a restart (a new layer, same key) the record teaches the secret back: it is masked elsewhere, the input opens', () => {
    const first = layer();
    first.remember('e1', [PW]);
    const s = stored(first, exec('e1', { name: PW }));
    const restarted = layer();
    restarted.track(s);
    expect(restarted.masker('e1').mask(`echo ${PW}`)).toBe(`echo ${MASK}`);
    expect(restarted.openInput(s, 'name', s.inputs.name)).toBe(PW);
  });

  it('a replay copy (same originalId) keeps the sealed text; a copy into another execution is a clear text that looks sealed', () => {
    const l = layer();
    l.remember('e1', [PW]);
    const first = stored(l, exec('e1', { name: PW }));
    const replay = { ...first, id: 'e2' };
    expect(stored(l, replay).inputs.name).toBe(first.inputs.name);
    expect(l.openInput(replay, 'name', replay.inputs.name)).toBe(PW);
    const copied = stored(l, exec('e3', { name: first.inputs.name }));
    expect(copied.inputs.name).not.toBe(first.inputs.name);
    expect(l.openInput(copied, 'name', copied.inputs.name)).toBe(first.inputs.name); // never the clear value
  });

  it('a Subflow child: a value its parent knows is sealed in the child', () => {
    const l = layer();
    l.remember('p1', [PW]);
    const child = stored(l, exec('c1', { x: PW }, { parent: { executionId: 'p1', taskRunId: 't', namespace: 'n', flowId: 'f' } }));
    expect(isSealed(child.inputs.x)).toBe(true);
    expect(l.openInput(child, 'x', child.inputs.x)).toBe(PW);
  });

  it('without a key the known secret is left for masking, as before; a sealed-looking text passes', () => {
    const l = new SecretLayer({ values: () => [] });
    l.remember('e1', [PW]);
    const e = exec('e1', { name: PW });
    expect(stored(l, e)).toBe(e);
    expect(l.masker('e1').maskDeep(e.inputs)).toEqual({ name: MASK });
  });

  it('an input value sealed for another input or execution does not open: the error names the input', () => {
    const l = layer();
    const e = exec('e1', {});
    expect(() => l.openInput(e, 'name', { deep: [box.seal(PW, inputAad(e, 'other'))] })).toThrow("Input 'name' cannot be decrypted");
    expect(() => new SecretLayer({ values: () => [] }).openInput(e, 'name', box.seal(PW, inputAad(e, 'name')))).toThrow(/no encryption key is set \(ENCRYPTION_KEY\)/);
  });
});

describe('values reported between the operator and a task Pod\'s runner', () => {
  it('sealedValues carries an execution\'s values sealed for it; learnSealed remembers them for that execution only', () => {
    const runner = layer();
    runner.remember('e1', ['declared-credential']);
    const sealed = runner.sealedValues('e1');
    expect(sealed).toHaveLength(1);
    expect(JSON.stringify(sealed)).not.toContain('declared-credential');
    const operator = layer();
    operator.learnSealed('e2', sealed); // sealed for e1: opens nowhere else
    expect(operator.masker('e2').mask('declared-credential')).toBe('declared-credential');
    operator.learnSealed('e1', [...sealed, 'fpenc1:not-sealed-here', box.seal('x-other', inputAad(exec('e1', {}), 'pw'))]);
    expect(operator.masker('e1').mask('declared-credential x-other')).toBe(`${MASK} x-other`);
  });

  it('without a key nothing is reported nor learnt', () => {
    const l = new SecretLayer({ values: () => [] });
    l.remember('e1', ['declared-credential']);
    expect(l.sealedValues('e1')).toEqual([]);
    expect(layer().sealedValues('unknown')).toEqual([]);
    l.learnSealed('e2', layer().sealedValues('e1'));
    expect(l.masker('e2').size).toBe(0);
  });
});

describe('maskers', () => {
  it('openInput returns the clear value and masks it in that execution only', () => {
    const l = layer(['global-secret']);
    const e = l.sealInputs(exec('e1', { pw: 'p4ssw0rd' }), DEFS);
    expect(l.openInput(e, 'pw', e.inputs.pw)).toBe('p4ssw0rd');
    expect(l.masker('e1').mask('p4ssw0rd global-secret')).toBe(`${MASK} ${MASK}`);
    expect(l.masker('other').mask('p4ssw0rd global-secret')).toBe(`p4ssw0rd ${MASK}`);
    expect(l.masker().mask('p4ssw0rd')).toBe('p4ssw0rd');
  });

  it('openInput refuses a sealed value that does not open, passes an unsealed one', () => {
    const l = layer();
    const e = exec('e1', {});
    expect(() => l.openInput(e, 'pw', box.seal('x', 'other'))).toThrow(/cannot be decrypted/);
    expect(l.openInput(e, 'pw', 'legacy clear value')).toBe('legacy clear value');
  });

  it('track learns the sealed inputs of a record and the values of its parent', () => {
    const l = layer();
    const parent = l.sealInputs(exec('p1', { pw: 'parent-pass' }), DEFS);
    l.track(parent);
    l.remember('p1', ['declared-by-task']);
    const child = exec('c1', { name: 'parent-pass' }, { parent: { executionId: 'p1', taskRunId: 't', namespace: 'n', flowId: 'f' } });
    l.track(child);
    expect(l.masker('p1').mask('parent-pass')).toBe(MASK);
    expect(l.masker('c1').mask('parent-pass declared-by-task')).toBe(`${MASK} ${MASK}`);
  });

  it('refresh reads the source again', () => {
    const values = ['first-secret'];
    const l = new SecretLayer({ values: () => values });
    values.push('added-later');
    expect(l.masker().mask('added-later')).toBe('added-later');
    l.refresh();
    expect(l.masker().mask('first-secret added-later')).toBe(`${MASK} ${MASK}`);
  });

  it('forgets the oldest executions past its bound', () => {
    const l = new SecretLayer({ values: () => [], maxExecutions: 2 });
    for (const id of ['a', 'b', 'c']) l.remember(id, [`value-of-${id}`]);
    expect(l.masker('a').mask('value-of-a')).toBe('value-of-a');
    expect(l.masker('c').mask('value-of-c')).toBe(MASK);
  });
});

describe('the key', () => {
  let tmp: ReturnType<typeof tempDir> | undefined;
  afterEach(() => tmp?.remove());

  it('embedded: created once in the data directory, mode 0600, then reused', () => {
    tmp = tempDir();
    const sealed = embeddedBox({}, tmp.dir).seal('v4lue', 'a');
    const file = join(tmp.dir, KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')).toHaveLength(32);
    expect(embeddedBox({}, tmp.dir).open(sealed, 'a')).toBe('v4lue');
  });

  it('ENCRYPTION_KEY wins over the file; a malformed key is refused naming the setting', () => {
    tmp = tempDir();
    const key = randomBytes(32).toString('base64');
    const sealed = new SecretBox(Buffer.from(key, 'base64')).seal('v4lue', 'a');
    expect(embeddedBox({ ENCRYPTION_KEY: key }, tmp.dir).open(sealed, 'a')).toBe('v4lue');
    expect(() => parseEncryptionKey('c2hvcnQ=')).toThrow('ENCRYPTION_KEY must be the base64 of 32 random bytes (e.g. `openssl rand -base64 32`), got 5 bytes');
    expect(() => embeddedBox({ ENCRYPTION_KEY: 'not base64!' }, tmp!.dir)).toThrow(/ENCRYPTION_KEY/);
  });
});
