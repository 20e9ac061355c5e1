// SQL text of the jdbc tasks: splits a script into statements and turns Kestra's named parameters (`:name`) into the
// driver's bound placeholders (`$1` for PostgreSQL, `?` for MySQL). One scanner serves both, so quoted text, quoted
// identifiers, comments, PostgreSQL dollar-quoted bodies and `::` casts are never split or treated as parameters.
// Values are bound by the server, never spliced into the text. Pure.

export type Dialect = 'postgresql' | 'mysql';

/** One piece of SQL text: code (where `;` and `:name` mean something) or an opaque span (quotes, comments). */
interface Span { code: boolean; text: string }

const DOLLAR_TAG = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/;

/** Cuts `sql` into code and opaque spans; an unterminated quote or comment runs to the end (the server reports it). */
function scan(sql: string, dialect: Dialect): Span[] {
  const spans: Span[] = [];
  let code = '';
  let i = 0;
  const opaque = (end: number) => {
    if (code) spans.push({ code: true, text: code });
    code = '';
    spans.push({ code: false, text: sql.slice(i, end) });
    i = end;
  };
  while (i < sql.length) {
    const c = sql[i];
    const next = sql[i + 1];
    if (c === '\'' || c === '"' || (c === '`' && dialect === 'mysql')) {
      // Quoted text or identifier: a doubled quote stays inside; MySQL also escapes with a backslash in strings.
      let j = i + 1;
      while (j < sql.length) {
        if (sql[j] === '\\' && dialect === 'mysql' && c !== '`') { j += 2; continue; }
        if (sql[j] === c) {
          if (sql[j + 1] === c) { j += 2; continue; }
          break;
        }
        j++;
      }
      opaque(Math.min(j + 1, sql.length));
    } else if (c === '-' && next === '-') {
      const j = sql.indexOf('\n', i);
      opaque(j < 0 ? sql.length : j + 1);
    } else if (c === '#' && dialect === 'mysql') {
      const j = sql.indexOf('\n', i);
      opaque(j < 0 ? sql.length : j + 1);
    } else if (c === '/' && next === '*') {
      const j = sql.indexOf('*/', i + 2);
      opaque(j < 0 ? sql.length : j + 2);
    } else if (c === '$' && dialect === 'postgresql' && !/[A-Za-z0-9_]/.test(sql[i - 1] ?? '')) {
      const tag = DOLLAR_TAG.exec(sql.slice(i));
      if (tag) {
        const j = sql.indexOf(tag[0], i + tag[0].length);
        opaque(j < 0 ? sql.length : j + tag[0].length);
      } else { code += c; i++; }
    } else { code += c; i++; }
  }
  if (code) spans.push({ code: true, text: code });
  return spans;
}

/** The statements of a script, split at `;` outside quotes and comments; blank ones (and comment-only ones) dropped. */
export function splitStatements(sql: string, dialect: Dialect): string[] {
  const out: string[] = [];
  let current = '';
  let meaningful = false;
  const flush = () => {
    if (meaningful && current.trim()) out.push(current.trim());
    current = '';
    meaningful = false;
  };
  for (const span of scan(sql, dialect)) {
    if (!span.code) {
      current += span.text;
      if (!span.text.startsWith('--') && !span.text.startsWith('/*') && !span.text.startsWith('#')) meaningful = true;
      continue;
    }
    const parts = span.text.split(';');
    parts.forEach((part, k) => {
      if (k > 0) flush();
      current += part;
      if (part.trim()) meaningful = true;
    });
  }
  flush();
  return out;
}

/** A statement ready for the driver: its text with placeholders, the values in placeholder order, the names used. */
export interface BoundStatement { text: string; values: unknown[]; used: string[] }

const NAMED = /(^|[^:A-Za-z0-9_]):([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * Replaces `:name` (outside quotes and comments; not PostgreSQL's `::type` casts) with bound placeholders and lists the
 * values in order. A name the SQL uses but `parameters` lacks is an error naming it.
 */
export function bindNamed(sql: string, parameters: Record<string, unknown>, dialect: Dialect): BoundStatement {
  const values: unknown[] = [];
  const used: string[] = [];
  const text = scan(sql, dialect).map((span) => (!span.code ? span.text : span.text.replace(NAMED, (_m, before: string, name: string) => {
    if (!Object.hasOwn(parameters, name)) throw new Error(`SQL uses the parameter ':${name}' but 'parameters' does not set it`);
    if (!used.includes(name)) used.push(name);
    // One placeholder per occurrence (as Kestra's `?`): the server infers each one's type from where it stands.
    values.push(parameters[name]);
    return dialect === 'mysql' ? `${before}?` : `${before}$${values.length}`;
  }))).join('');
  return { text, values, used };
}
