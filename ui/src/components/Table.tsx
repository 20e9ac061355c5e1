// A data table with paging done by the server: the page holds one page of rows and the total; the pager changes
// `page`/`size` (the page keeps them in its URL, see usePaging) and the page fetches again.
import type { ReactNode } from 'react';
import { useSearchParams } from 'react-router';

export interface Column<T> {
  key: string;
  header: string;
  render(row: T): ReactNode;
  className?: string;
}

export interface Paging { page: number; size: number; total: number; onChange(page: number, size: number): void }

export const PAGE_SIZES = [10, 25, 50, 100];

export function Table<T>({ columns, rows, rowKey, label, paging, empty }: {
  columns: Column<T>[]; rows: T[]; rowKey(row: T): string; label: string; paging?: Paging; empty?: ReactNode;
}) {
  return (
    <div className="table-wrap">
      <table className="table" aria-label={label}>
        <thead>
          <tr>{columns.map((c) => <th key={c.key} scope="col" className={c.className}>{c.header}</th>)}</tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>{columns.map((c) => <td key={c.key} className={c.className}>{c.render(row)}</td>)}</tr>
          ))}
        </tbody>
      </table>
      {rows.length === 0 && empty}
      {paging && <Pager {...paging} label={label} />}
    </div>
  );
}

function Pager({ page, size, total, onChange, label }: Paging & { label: string }) {
  const pages = Math.max(1, Math.ceil(total / size));
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <span className="muted">{total} total</span>
      <label>
        Rows per page{' '}
        <select value={size} onChange={(e) => onChange(1, Number(e.target.value))}>
          {PAGE_SIZES.map((s) => <option key={s} value={s}>{s}</option>)}
        </select>
      </label>
      <button type="button" onClick={() => onChange(page - 1, size)} disabled={page <= 1}>Previous page</button>
      <span aria-live="polite">Page {page} of {pages}</span>
      <button type="button" onClick={() => onChange(page + 1, size)} disabled={page >= pages}>Next page</button>
    </nav>
  );
}

/** `page` and `size` from the URL's query (`?page=2&size=25`), and a setter that keeps the other parameters. */
export function usePaging(defaultSize = 25): { page: number; size: number; setPaging(page: number, size: number): void } {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const size = PAGE_SIZES.includes(Number(params.get('size'))) ? Number(params.get('size')) : defaultSize;
  const setPaging = (p: number, s: number) => {
    const next = new URLSearchParams(params);
    next.set('page', String(p));
    next.set('size', String(s));
    setParams(next);
  };
  return { page, size, setPaging };
}
