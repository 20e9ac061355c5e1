// The flow's Revisions tab: every revision (number, date), any two compared side by side, and Restore of an older
// one (after a confirmation) through the rollback route, which makes a new revision with that source.
import { useEffect, useState } from 'react';
import { api, type Flow } from '../../../api';
import { DateTime } from '../../../components/DateTime';
import { ConfirmDialog } from '../../../components/Dialog';
import { EmptyState } from '../../../components/EmptyState';
import { ErrorBanner } from '../../../components/ErrorBanner';
import { SideBySideDiff } from '../../../components/SideBySideDiff';
import { Table, type Column } from '../../../components/Table';
import { useApi } from '../../../hooks';
import type { FlowTabProps } from '../tabs';

export function FlowRevisions({ flow, reload }: FlowTabProps) {
  const revisions = useApi((signal) => api.flowRevisions(flow.namespace, flow.id, signal), [flow.namespace, flow.id, flow.revision]);
  const list = revisions.data ?? [];
  const latest = list.length ? list[list.length - 1]!.revision : flow.revision;
  const [left, setLeft] = useState<number>();
  const [right, setRight] = useState<number>();
  // By default: the one before the latest against the latest.
  useEffect(() => {
    if (list.length === 0) return;
    setRight(latest);
    setLeft(list.length > 1 ? list[list.length - 2]!.revision : latest);
  }, [list.length, latest]);
  const [restore, setRestore] = useState<Flow>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string>();

  const doRestore = async () => {
    if (!restore) return;
    setBusy(true);
    setError(undefined);
    try {
      const created = await api.rollbackFlow(flow.namespace, flow.id, restore.revision);
      setDone(`Restored revision ${restore.revision} as revision ${created.revision}`);
      setRestore(undefined);
      reload();
    } catch (err) {
      setError(err);
      setRestore(undefined);
    } finally {
      setBusy(false);
    }
  };

  const columns: Column<Flow>[] = [
    { key: 'revision', header: 'Revision', className: 'num', render: (r) => r.revision },
    { key: 'date', header: 'Date', render: (r) => <DateTime value={r.updated} /> },
    { key: 'current', header: '', render: (r) => (r.revision === latest ? <span className="badge badge-ok">current</span> : null) },
    {
      key: 'actions', header: 'Actions',
      render: (r) => (
        <span className="row-gap">
          <button type="button" onClick={() => setLeft(r.revision)} aria-label={`Compare revision ${r.revision} on the left`}>Left</button>
          <button type="button" onClick={() => setRight(r.revision)} aria-label={`Compare revision ${r.revision} on the right`}>Right</button>
          {r.revision !== latest && (
            <button type="button" onClick={() => { setDone(undefined); setRestore(r); }} aria-label={`Restore revision ${r.revision}`}>Restore</button>
          )}
        </span>
      ),
    },
  ];

  const byNumber = (n: number | undefined) => list.find((r) => r.revision === n);
  const a = byNumber(left);
  const b = byNumber(right);
  const options = [...list].reverse();
  return (
    <div className="stack">
      <ErrorBanner error={revisions.error} onRetry={revisions.reload} />
      <ErrorBanner error={error} />
      {done && <p role="status" className="saved">{done}</p>}
      {revisions.loading && !revisions.data && <p className="muted" role="status">Loading…</p>}
      {revisions.data && (
        <section className="panel" aria-labelledby="revisions-h">
          <h2 id="revisions-h">Revisions</h2>
          <Table label="Revisions" columns={columns} rows={options} rowKey={(r) => String(r.revision)} empty={<EmptyState title="No revision" />} />
        </section>
      )}
      {list.length > 0 && (
        <section className="panel" aria-labelledby="compare-h">
          <h2 id="compare-h">Compare</h2>
          <div className="filters">
            <label className="field-inline">Left revision
              <select value={left ?? ''} onChange={(e) => setLeft(Number(e.target.value))}>
                {options.map((r) => <option key={r.revision} value={r.revision}>{r.revision}</option>)}
              </select>
            </label>
            <label className="field-inline">Right revision
              <select value={right ?? ''} onChange={(e) => setRight(Number(e.target.value))}>
                {options.map((r) => <option key={r.revision} value={r.revision}>{r.revision}</option>)}
              </select>
            </label>
          </div>
          {a && b && (
            <SideBySideDiff left={a.source ?? ''} right={b.source ?? ''} label={`Revision ${a.revision} compared with revision ${b.revision}`}
              leftTitle={`Revision ${a.revision}`} rightTitle={`Revision ${b.revision}`} />
          )}
        </section>
      )}
      <ConfirmDialog open={!!restore} title={`Restore revision ${restore?.revision ?? ''}?`} confirmLabel="Restore" busy={busy}
        onConfirm={() => void doRestore()} onCancel={() => setRestore(undefined)}>
        <p>This saves the source of revision {restore?.revision} as a new revision ({latest + 1}). Newer revisions are kept.</p>
      </ConfirmDialog>
    </div>
  );
}
