// The list pages' filter controls over their URL filters (hooks.ts useUrlFilters): the "Search" box (the `q` filter,
// applied when typing pauses or on Enter) and the "State" select of execution states. NamespaceSelect is the third.
import type { UrlFilters } from '../hooks';
import { EXECUTION_STATES } from '../pages/executions/states';

export function SearchFilter({ filters, label, placeholder = label }: { filters: UrlFilters; label: string; placeholder?: string }) {
  return (
    <label className="field-inline">Search
      <input type="search" aria-label={label} placeholder={placeholder} value={filters.search} onChange={(e) => filters.setSearch(e.target.value)}
        onKeyDown={(e) => { if (e.key === 'Enter') filters.applySearch(); }} />
    </label>
  );
}

/** The `state` filter: "All states" (empty) or one execution state. */
export function StateSelect({ filters }: { filters: UrlFilters }) {
  return (
    <label className="field-inline">State
      <select value={filters.value('state')} onChange={(e) => filters.set('state', e.target.value)}>
        <option value="">All states</option>
        {EXECUTION_STATES.map((s) => <option key={s} value={s}>{s}</option>)}
      </select>
    </label>
  );
}
