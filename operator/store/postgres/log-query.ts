// The log search syntax (`q`) compiled to a PostgreSQL tsquery expression made only of placeholders: plain words are
// AND-ed, "quoted phrases" match in order, a trailing `*` matches a prefix, `OR` between terms, `NOT`/`-` negates.
// Dangling operators are plain words. User text only ever travels as bind parameters, never inside the SQL.

export type LogTerm = { kind: 'word' | 'phrase' | 'prefix'; text: string; negated: boolean };

/** Text configuration: no stemming and no stop words, like SQLite FTS5's default tokenizer. */
export const TS_CONFIG = 'simple';

const HAS_WORD = /[\p{L}\p{N}]/u;
const OPERATORS = new Set(['AND', 'OR', 'NOT']);

type Token = { phrase: boolean; text: string };

function tokenize(q: string): Token[] {
  const tokens: Token[] = [];
  for (const m of q.matchAll(/"([^"]*)"?|([^\s"]+)/g)) {
    tokens.push(m[1] !== undefined ? { phrase: true, text: m[1] } : { phrase: false, text: m[2]! });
  }
  return tokens;
}

const isOperator = (t: Token | undefined): boolean => !!t && !t.phrase && OPERATORS.has(t.text);

function toTerm(token: Token, negated: boolean): LogTerm | undefined {
  if (token.phrase) return HAS_WORD.test(token.text) ? { kind: 'phrase', text: token.text, negated } : undefined;
  let text = token.text;
  if (!negated && text.length > 1 && text.startsWith('-') && HAS_WORD.test(text)) { text = text.slice(1); negated = true; }
  if (!HAS_WORD.test(text)) return undefined;
  if (text.endsWith('*')) return { kind: 'prefix', text: text.replace(/\*+$/, ''), negated };
  return { kind: 'word', text, negated };
}

/** Parses `q` into OR-ed groups of AND-ed terms (NOT binds tightest, then AND, then OR). */
export function parseLogQuery(q: string): LogTerm[][] {
  const tokens = tokenize(q);
  const groups: LogTerm[][] = [[]];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const current = groups[groups.length - 1]!;
    const next = tokens[i + 1];
    const nextIsTerm = next !== undefined && !isOperator(next);
    if (isOperator(token)) {
      if (token.text === 'AND' && current.length > 0 && nextIsTerm) continue;
      if (token.text === 'OR' && current.length > 0 && nextIsTerm) { groups.push([]); continue; }
      if (token.text === 'NOT' && nextIsTerm) {
        const term = toTerm(next!, true);
        if (term) current.push(term);
        i++;
        continue;
      }
    }
    const term = toTerm(token, false);
    if (term) current.push(term);
  }
  return groups.filter((g) => g.length > 0);
}

/** A prefix term as tsquery text: only letter/digit/underscore pieces, each quoted, so nothing in it is an operator. */
export function prefixQuery(text: string): string | undefined {
  const pieces = text.split(/[^\p{L}\p{N}_]+/u).filter((p) => p !== '');
  if (pieces.length === 0) return undefined;
  return pieces.map((p, i) => (i === pieces.length - 1 ? `'${p}':*` : `'${p}'`)).join(' <-> ');
}

/**
 * SQL tsquery expression for `q`, or undefined when it holds no searchable word (then nothing matches).
 * `param(value)` registers a bind parameter and returns its placeholder (`$n`).
 */
export function compileLogQuery(q: string, param: (value: string) => string): string | undefined {
  const groups = parseLogQuery(q).map((group) => group.flatMap((term) => {
    let sql: string;
    if (term.kind === 'word') sql = `plainto_tsquery('${TS_CONFIG}', ${param(term.text)})`;
    else if (term.kind === 'phrase') sql = `phraseto_tsquery('${TS_CONFIG}', ${param(term.text)})`;
    else {
      const text = prefixQuery(term.text);
      if (text === undefined) return [];
      sql = `to_tsquery('${TS_CONFIG}', ${param(text)})`;
    }
    return [term.negated ? `(!! ${sql})` : sql];
  })).filter((g) => g.length > 0);
  if (groups.length === 0) return undefined;
  return groups.map((g) => `(${g.join(' && ')})`).join(' || ');
}
