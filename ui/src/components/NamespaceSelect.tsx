// A labelled namespace filter for list pages: "All namespaces" and the namespaces of the flows (loaded once).
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
