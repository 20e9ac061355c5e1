// Which namespaces a flow may reach beyond its own (KV entries and execution files of another namespace): none, unless
// the ALLOWED_NAMESPACES setting grants it, as the contract's "cross-namespace access is possible for allowed
// namespaces" says. Pure: the setting's text in, decisions out.

/** `x` matches namespace x only; `x.*` matches x and every namespace below it; `*` matches every namespace. */
export type NamespacePattern = string;

export interface NamespaceGrant {
  /** The namespace whose data is shared. */
  target: NamespacePattern;
  /** Namespaces whose flows may read and write it. */
  from: NamespacePattern[];
}

export interface NamespaceGrants { grants: NamespaceGrant[] }

export const NO_GRANTS: NamespaceGrants = Object.freeze({ grants: [] });

/** The setting, its format and an example, for errors and docs. */
export const ALLOWED_NAMESPACES_HELP =
  'ALLOWED_NAMESPACES: a JSON object mapping a namespace to the namespaces allowed to use its KV entries and files, ' +
  'e.g. {"company.shared": ["company.*"]} (`x.*` is x and its children, `*` is every namespace)';

const PATTERN = /^(\*|[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*(\.\*)?)$/i;

function checkPattern(p: unknown, where: string): NamespacePattern {
  if (typeof p !== 'string' || !PATTERN.test(p)) {
    throw new Error(`${where}: ${JSON.stringify(p)} is not a namespace pattern (${ALLOWED_NAMESPACES_HELP})`);
  }
  return p;
}

/** Parses ALLOWED_NAMESPACES; a malformed value is refused at start-up naming the setting. */
export function namespaceGrantsFromEnv(env: Record<string, string | undefined>): NamespaceGrants {
  const raw = env.ALLOWED_NAMESPACES?.trim();
  if (!raw) return NO_GRANTS;
  let parsed: unknown;
  try { parsed = JSON.parse(raw); } catch (err) {
    throw new Error(`ALLOWED_NAMESPACES is not valid JSON (${(err as Error).message}); ${ALLOWED_NAMESPACES_HELP}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`ALLOWED_NAMESPACES must be a JSON object; ${ALLOWED_NAMESPACES_HELP}`);
  const grants = Object.entries(parsed as Record<string, unknown>).map(([target, from]) => {
    const where = `ALLOWED_NAMESPACES[${JSON.stringify(target)}]`;
    if (!Array.isArray(from)) throw new Error(`${where} must be a list of namespace patterns; ${ALLOWED_NAMESPACES_HELP}`);
    return { target: checkPattern(target, 'ALLOWED_NAMESPACES key'), from: from.map((p) => checkPattern(p, where)) };
  });
  return { grants };
}

export function matchesNamespace(pattern: NamespacePattern, namespace: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) {
    const base = pattern.slice(0, -2);
    return namespace === base || namespace.startsWith(`${base}.`);
  }
  return pattern === namespace;
}

/** True when a flow of namespace `from` may use the data of namespace `target`: its own, or granted. */
export function namespaceAllowed(from: string, target: string, g: NamespaceGrants = NO_GRANTS): boolean {
  if (from === target) return true;
  return g.grants.some((grant) => matchesNamespace(grant.target, target) && grant.from.some((p) => matchesNamespace(p, from)));
}

/** Why `from` may not use `target`'s data (undefined when it may). `what` names the data, e.g. "KV key `k`". */
export function namespaceDenied(from: string, target: string, what: string, g: NamespaceGrants = NO_GRANTS): string | undefined {
  if (namespaceAllowed(from, target, g)) return undefined;
  return `${what} of namespace '${target}' is not accessible from namespace '${from}': a flow reaches only its own ` +
    `namespace unless ALLOWED_NAMESPACES grants more`;
}
