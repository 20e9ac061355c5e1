// The flow's Overview tab: its Markdown description (rendered safely), inputs, triggers and recent executions.
import { api, type FlowInput, type FlowTrigger } from '../../../api';
import { EmptyState } from '../../../components/EmptyState';
import { ErrorBanner } from '../../../components/ErrorBanner';
import { executionColumns } from '../../../components/execution-columns';
import { Markdown } from '../../../components/Markdown';
import { Table, type Column } from '../../../components/Table';
import { useApi } from '../../../hooks';
import type { FlowTabProps } from '../tabs';

const RECENT = 10;

const short = (type: string): string => type.split('.').pop() ?? type;
const shown = (v: unknown): string => (v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));

const inputColumns: Column<FlowInput>[] = [
  { key: 'id', header: 'Id', render: (i) => <code>{i.id}</code> },
  { key: 'type', header: 'Type', render: (i) => i.type },
  { key: 'required', header: 'Required', render: (i) => (i.required === false ? 'no' : 'yes') },
  { key: 'defaults', header: 'Default', render: (i) => <code>{shown(i.defaults)}</code> },
  { key: 'description', header: 'Description', render: (i) => i.description ?? '' },
];

/** What a trigger is set to do, in a few words (its schedule for the common Schedule trigger). */
const triggerDetail = (t: FlowTrigger): string => (typeof t.cron === 'string' ? `cron ${t.cron}` : t.description ?? '');

const triggerColumns: Column<FlowTrigger>[] = [
  { key: 'id', header: 'Id', render: (t) => <code>{t.id}</code> },
  { key: 'type', header: 'Type', render: (t) => <span title={t.type}>{short(t.type)}</span> },
  { key: 'detail', header: 'Details', render: triggerDetail },
  { key: 'disabled', header: 'Enabled', render: (t) => (t.disabled ? 'no' : 'yes') },
];

const recentColumns = executionColumns('id', 'state', 'start', 'duration', 'revision');

export function FlowOverview({ flow }: FlowTabProps) {
  const recent = useApi((signal) => api.flowExecutions(flow.namespace, flow.id, 1, RECENT, signal), [flow.namespace, flow.id]);
  return (
    <div className="stack">
      <section aria-labelledby="desc-h" className="panel">
        <h2 id="desc-h">Description</h2>
        {flow.description ? <Markdown source={flow.description} /> : <p className="muted">No description.</p>}
      </section>
      <section aria-labelledby="inputs-h" className="panel">
        <h2 id="inputs-h">Inputs</h2>
        <Table label="Inputs" columns={inputColumns} rows={flow.inputs ?? []} rowKey={(i) => i.id} empty={<EmptyState title="This flow has no inputs" />} />
      </section>
      <section aria-labelledby="triggers-h" className="panel">
        <h2 id="triggers-h">Triggers</h2>
        <Table label="Triggers" columns={triggerColumns} rows={flow.triggers ?? []} rowKey={(t) => t.id} empty={<EmptyState title="This flow has no triggers" />} />
      </section>
      <section aria-labelledby="recent-h" className="panel">
        <h2 id="recent-h">Recent executions</h2>
        <ErrorBanner error={recent.error} onRetry={recent.reload} />
        {recent.data && (
          <Table label="Recent executions" columns={recentColumns} rows={recent.data.results} rowKey={(e) => e.id}
            empty={<EmptyState title="This flow has not run yet" />} />
        )}
      </section>
    </div>
  );
}
