// The one truthiness rule of rendered conditions (If, Fail, runIf, ExpressionCondition): "", "false", "0", "null"
// (any case, trimmed) and falsy values are false; anything else is true.
export function truthy(v: unknown): boolean {
  if (typeof v === 'string') { const s = v.trim().toLowerCase(); return !(s === '' || s === 'false' || s === '0' || s === 'null'); }
  return Boolean(v);
}
