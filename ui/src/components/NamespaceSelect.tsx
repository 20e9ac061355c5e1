// The "Namespace" filter of list pages: a labelled select with "All namespaces" (the empty value) and the namespaces
// that hold flows (loaded once per mount).
import { api } from '../api';
import { useApi } from '../hooks';

export function NamespaceSelect({ value, onChange }: { value: string; onChange(namespace: string): void }) {
  const namespaces = useApi((signal) => api.flowNamespaces(signal), []);
  return (
    <label className="field-inline">Namespace
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">All namespaces</option>
        {(namespaces.data ?? []).map((ns) => <option key={ns} value={ns}>{ns}</option>)}
      </select>
    </label>
  );
}
