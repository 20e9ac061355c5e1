// The "Namespace" filter of list pages: a labelled select of the given namespaces, with "All namespaces" as the empty value.
export function NamespaceSelect({ value, namespaces, onChange }: { value: string; namespaces: string[] | undefined; onChange(ns: string): void }) {
  return (
    <label className="field-inline">Namespace
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">All namespaces</option>
        {(namespaces ?? []).map((ns) => <option key={ns} value={ns}>{ns}</option>)}
      </select>
    </label>
  );
}
