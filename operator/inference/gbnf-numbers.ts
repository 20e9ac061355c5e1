// GBNF for JSON numbers within bounds: canonical decimal integers in [lo, hi] of any width, built digit position by
// digit position (a range of equal-length numbers splits into "first digit at the low edge", "a free middle" and
// "first digit at the high edge"), and bounded decimals built on them. Pure; every output stays inside the bounds.

/** A JSON integer with at most this many digits, as node-llama-cpp's own grammar (beyond, JSON loses precision). */
export const MAX_DIGITS = 16;

const digits = (n: number): string => (n === 0 ? '' : n === 1 ? ' [0-9]' : ` [0-9]{${n}}`);

/** Equal-length digit strings x <= y (leading zeros allowed): every string between them. */
function sameLength(x: string, y: string): string {
  if (x.length === 0) return '';
  if (x === y) return `"${x}"`;
  const n = x.length - 1;
  const [dx, dy, rx, ry] = [x[0], y[0], x.slice(1), y.slice(1)];
  if (dx === dy) return `"${dx}" (${sameLength(rx, ry)})`;
  const alts: string[] = [];
  let midLo = Number(dx), midHi = Number(dy);
  if (!/^0*$/.test(rx)) { alts.push(`"${dx}" (${sameLength(rx, '9'.repeat(n))})`); midLo++; }
  if (!/^9*$/.test(ry)) { alts.push(`"${dy}" (${sameLength('0'.repeat(n), ry)})`); midHi--; }
  if (midLo <= midHi) alts.push(`${midLo === midHi ? `"${midLo}"` : `[${midLo}-${midHi}]`}${digits(n)}`);
  return alts.join(' | ');
}

/** Non-negative integers in [a, b] (b undefined: up to MAX_DIGITS digits), no leading zeros. */
function naturals(a: bigint, b: bigint | undefined): string[] {
  const alts: string[] = [];
  const la = String(a).length;
  const lb = b === undefined ? Math.max(la, MAX_DIGITS) : String(b).length;
  for (let len = la; len <= lb; len++) {
    const lo = len === la ? a : 10n ** BigInt(len - 1);
    const top = 10n ** BigInt(len) - 1n;
    if (b === undefined && len > la) { // every longer length at once
      alts.push(`[1-9] [0-9]{${len - 1},${lb - 1}}`);
      break;
    }
    const hi = b !== undefined && b < top ? b : top;
    if (lo > hi) continue;
    if (len === 1 && lo === 0n && hi === 0n) { alts.push('"0"'); continue; }
    alts.push(`(${sameLength(String(lo), String(hi))})`);
  }
  return alts;
}

/** Canonical JSON integers in [lo, hi] (either side open when undefined); undefined when the range is empty. */
export function integerRange(lo: bigint | undefined, hi: bigint | undefined): string | undefined {
  if (lo !== undefined && hi !== undefined && lo > hi) return undefined;
  const widest = 10n ** BigInt(MAX_DIGITS) - 1n; // beyond MAX_DIGITS digits a side is open, or nothing fits
  if ((lo !== undefined && lo > widest) || (hi !== undefined && hi < -widest)) return undefined;
  if (hi !== undefined && hi > widest) hi = undefined;
  if (lo !== undefined && lo < -widest) lo = undefined;
  const alts: string[] = [];
  if (lo === undefined || lo < 0n) { // negative part: magnitudes [max(1, -hi), -lo]
    const magLo = hi !== undefined && hi < 0n ? -hi : 1n;
    const magHi = lo === undefined ? undefined : -lo;
    alts.push(...naturals(magLo, magHi).map((a) => `"-" ${a}`));
  }
  if (hi === undefined || hi >= 0n) alts.push(...naturals(lo !== undefined && lo > 0n ? lo : 0n, hi));
  return alts.length ? alts.join(' | ') : undefined;
}

export interface Bounds { min?: number; max?: number; exclusiveMin?: boolean; exclusiveMax?: boolean }

/** The integer bounds of a schema's `minimum`/`maximum`/`exclusive*` (numbers), rounded inwards. */
export function integerBounds(b: Bounds): [bigint | undefined, bigint | undefined] {
  const lo = b.min === undefined ? undefined : b.exclusiveMin && Number.isInteger(b.min) ? BigInt(b.min) + 1n : BigInt(Math.ceil(b.min));
  const hi = b.max === undefined ? undefined : b.exclusiveMax && Number.isInteger(b.max) ? BigInt(b.max) - 1n : BigInt(Math.floor(b.max));
  return [lo, hi];
}

const FRACTION = '"." [0-9]{1,15}';

/**
 * Decimals in the bounds, without exponents: an integer part I alone when I is inside, and `I.fff` when the whole of
 * [I, I+1) is (for negatives, (-(I+1), -I]). Values near a fractional edge are left out: the grammar is a subset.
 */
export function numberRange(b: Bounds): string | undefined {
  const alts: string[] = [];
  const side = (lo: number | undefined, loEx: boolean, hi: number | undefined, hiEx: boolean, sign: string): void => {
    // magnitudes in [lo, hi], lo >= 0
    const [iLo, iHi] = integerBounds({ min: lo, max: hi, exclusiveMin: loEx, exclusiveMax: hiEx });
    const ints = integerRange(iLo, iHi);
    if (ints) alts.push(`${sign}(${ints})`);
    const fLo = lo === undefined ? 0n : loEx && Number.isInteger(lo) ? BigInt(lo) + 1n : BigInt(Math.ceil(lo));
    const fHi = hi === undefined ? undefined : BigInt(Math.floor(hi)) - 1n;
    const fracs = integerRange(fLo, fHi);
    if (fracs) alts.push(`${sign}(${fracs}) ${FRACTION}`);
  };
  const { min, max } = b;
  if (min !== undefined && max !== undefined && (min > max || (min === max && (b.exclusiveMin || b.exclusiveMax)))) return undefined;
  if (max === undefined || max > 0 || (max === 0 && !b.exclusiveMax)) { // non-negative part [max(min,0), max]
    const pos = min !== undefined && min >= 0;
    side(pos ? min : 0, pos ? !!b.exclusiveMin : false, max, !!b.exclusiveMax, '');
  }
  if (min === undefined || min < 0) { // negative part: magnitudes [max(-max, 0), -min], exclusivity swapped
    const neg = max !== undefined && max <= 0;
    side(neg ? -max : 0, neg ? !!b.exclusiveMax : true, min === undefined ? undefined : -min, !!b.exclusiveMin, '"-" ');
  }
  return alts.length ? alts.join(' | ') : undefined;
}
