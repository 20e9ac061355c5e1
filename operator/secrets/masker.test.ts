// The masker as tables: each encoded form of a secret is masked, short values are not, the longest form wins, data is
// masked deeply (keys too) without copying what did not change.
import { describe, expect, it } from 'vitest';
import { createMasker, encodedForms, MASK, NO_SECRETS } from './masker.js';

const SECRET = 's3cr3t-value';
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('mask', () => {
  const m = createMasker([SECRET, 'p"w\\d/ 9é&']);
  it.each([
    ['the value', `token=${SECRET};`, `token=${MASK};`],
    ['twice', `${SECRET}${SECRET}`, `${MASK}${MASK}`],
    ['standard base64 (the SECRET_<NAME> form)', `x ${b64(SECRET)} y`, `x ${MASK} y`],
    ['URL-safe base64', Buffer.from('p"w\\d/ 9é&').toString('base64url'), MASK],
    ['base64 inside a larger base64 text (Basic auth)', `Basic ${b64(`user:${SECRET}`)}`, /^Basic dXNlcj.{1,2}\*{6}.{0,3}$/],
    ['base64 at the third alignment', b64(`ab${SECRET}`), /^YW.\*{6}.{0,3}$/],
    ['JSON escaping', JSON.stringify({ pw: 'p"w\\d/ 9é&' }), `{"pw":"${MASK}"}`],
    ['JSON inside JSON', JSON.stringify(JSON.stringify({ pw: 'p"w\\d/ 9é&' })), `"{\\"pw\\":\\"${MASK}\\"}"`],
    ['percent-encoding', `?pw=${encodeURIComponent('p"w\\d/ 9é&')}`, `?pw=${MASK}`],
    ['form encoding', new URLSearchParams({ pw: 'p"w\\d/ 9é&' }).toString(), `pw=${MASK}`],
    ['hex', Buffer.from(SECRET).toString('hex'), MASK],
    ['upper-case hex', Buffer.from(SECRET).toString('hex').toUpperCase(), MASK],
    ['no secret', 'nothing to see', 'nothing to see'],
  ])('%s', (_what, text, expected) => {
    const out = m.mask(text);
    if (expected instanceof RegExp) expect(out).toMatch(expected); else expect(out).toBe(expected);
    expect(out).not.toContain(SECRET);
  });

  it('masks the longest form when one value is a prefix of another', () => {
    expect(createMasker(['abcd', 'abcdefgh']).mask('xabcdefghx abcdx')).toBe(`x${MASK}x ${MASK}x`);
  });

  it('ignores values shorter than 4 characters (and their forms)', () => {
    const short = createMasker(['abc', '', 'ok']);
    expect(short.size).toBe(0);
    expect(short.mask('abc ok YWJj')).toBe('abc ok YWJj');
  });

  it('ignores values made of asterisks (masking again would grow the mask at every write)', () => {
    const m = createMasker(['****', '*******']);
    expect(m.size).toBe(0);
    expect(m.mask(m.mask(`${MASK}${MASK}`))).toBe(`${MASK}${MASK}`);
  });

  it('escapes regex syntax in values', () => {
    expect(createMasker(['a.b*c+(d)|[e]{2}$^']).mask('xa.b*c+(d)|[e]{2}$^x aXbbc')).toBe(`x${MASK}x aXbbc`);
  });

  it('masks values with line breaks and long values', () => {
    const pem = `-----BEGIN KEY-----\n${'A'.repeat(3000)}\n-----END KEY-----`;
    expect(createMasker([pem]).mask(`key: ${pem}.`)).toBe(`key: ${MASK}.`);
  });

  it('with() adds values and shares the masker when nothing is added', () => {
    const base = createMasker([SECRET]);
    expect(base.with([SECRET, 'ab'])).toBe(base);
    const more = base.with(['hunter22']);
    expect(more.mask(`${SECRET} hunter22`)).toBe(`${MASK} ${MASK}`);
    expect(base.mask('hunter22')).toBe('hunter22');
  });

  it('lists the forms of a value', () => {
    expect(encodedForms('s3cr3t')).toEqual(expect.arrayContaining(['s3cr3t', 'czNjcjN0', '733363723374']));
  });
});

describe('maskDeep', () => {
  const m = createMasker([SECRET]);
  it('masks strings and keys at any depth, keeps other values', () => {
    const data = { a: [1, true, null, `x${SECRET}`], [SECRET]: { n: 2, s: SECRET } };
    expect(m.maskDeep(data)).toEqual({ a: [1, true, null, `x${MASK}`], [MASK]: { n: 2, s: MASK } });
  });

  it('returns the same objects when nothing changed', () => {
    const inner = { b: 'clean' };
    const data = { inner, other: { s: SECRET } };
    const out = m.maskDeep(data);
    expect(out).not.toBe(data);
    expect(out.inner).toBe(inner);
    expect(m.maskDeep(inner)).toBe(inner);
  });

  it('keeps prototype-free objects prototype-free', () => {
    const d = Object.assign(Object.create(null) as Record<string, unknown>, { s: SECRET });
    expect(Object.getPrototypeOf(m.maskDeep(d))).toBe(null);
  });

  it('leaves strings and keys `keep` accepts', () => {
    expect(m.maskDeep({ a: `enc:${SECRET}`, b: SECRET }, { keep: (s) => s.startsWith('enc:') })).toEqual({ a: `enc:${SECRET}`, b: MASK });
    expect(m.maskDeep({ [`enc:${SECRET}`]: 1, [SECRET]: 2 }, { keep: (s) => s.startsWith('enc:') })).toEqual({ [`enc:${SECRET}`]: 1, [MASK]: 2 }); // keys too
  });

  it('leaves keys when asked to', () => {
    expect(m.maskDeep({ [SECRET]: { [SECRET]: SECRET } }, { keys: false })).toEqual({ [SECRET]: { [SECRET]: MASK } });
  });

  it('is the identity without secrets', () => {
    const data = { s: 'x' };
    expect(NO_SECRETS.maskDeep(data)).toBe(data);
    expect(NO_SECRETS.mask('abc')).toBe('abc');
  });
});
