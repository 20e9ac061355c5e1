// `flowpilot kv ...` (a namespace's key-value pairs) and `flowpilot trigger ...` (list, enable/disable, backfill).
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { CliError, ExitCodes, usageError } from '../errors.js';
import { collect, connect, enc, inputsObject, keyValues, print } from '../context.js';
import { table } from '../output.js';

interface KvItem { key: string; type: string; expirationDate?: string | null; updateDate?: string }

export function kvCommand(): Command {
  const kv = new Command('kv').description('Read and write the key-value pairs of a namespace');

  kv.command('get').description('Print a value (table: the value itself; json/yaml: {type, value})')
    .argument('<namespace>').argument('<key>')
    .action(async (namespace: string, key: string, _o, cmd: Command) => {
      const client = await connect(cmd);
      const r = await client.raw('GET', `/namespaces/${enc(namespace)}/kv/${enc(key)}`, { accept: [404] });
      if (r.status === 404) throw new CliError(`no key '${key}' in namespace '${namespace}': list them with flowpilot kv list ${namespace}`, ExitCodes.FAILED);
      const v = r.body as { type: string; value: unknown };
      print(cmd, v, () => (typeof v.value === 'string' ? v.value : JSON.stringify(v.value)));
    });

  kv.command('set').description('Set a value: JSON text is stored with its type (number, boolean, object...), anything else as a string')
    .argument('<namespace>').argument('<key>')
    .argument('<value>', 'the value; @path reads it from a file, - from stdin')
    .option('--string', 'store the text as a string even when it is JSON', false)
    .option('--ttl <duration>', 'expire after this ISO 8601 duration (e.g. PT1H)')
    .action(async (namespace: string, key: string, value: string, o: { string: boolean; ttl?: string }, cmd: Command) => {
      let text = value;
      if (value === '-') text = readFileSync(0, 'utf8');
      else if (value.startsWith('@')) {
        try { text = readFileSync(value.slice(1), 'utf8'); } catch (err) {
          throw usageError(`cannot read '${value.slice(1)}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
        }
      }
      const client = await connect(cmd);
      const saved = await client.json('PUT', `/namespaces/${enc(namespace)}/kv/${enc(key)}`, {
        body: o.string ? JSON.stringify(text) : text, contentType: 'text/plain', headers: o.ttl ? { ttl: o.ttl } : {},
      });
      print(cmd, saved, () => `set ${namespace}/${key} (${(saved as { type: string }).type})`);
    });

  kv.command('delete').description('Delete a key (a missing key is reported, not an error)')
    .argument('<namespace>').argument('<key>')
    .action(async (namespace: string, key: string, _o, cmd: Command) => {
      const client = await connect(cmd);
      const deleted = await client.json<boolean>('DELETE', `/namespaces/${enc(namespace)}/kv/${enc(key)}`);
      print(cmd, { namespace, key, deleted }, () => (deleted ? `deleted ${namespace}/${key}` : `${namespace}/${key} was not set`));
    });

  kv.command('list').description('List the keys of a namespace')
    .argument('<namespace>')
    .action(async (namespace: string, _o, cmd: Command) => {
      const client = await connect(cmd);
      const list = await client.json<KvItem[]>('GET', `/namespaces/${enc(namespace)}/kv`);
      print(cmd, list, () => table(list, [
        { header: 'KEY', value: (k) => k.key }, { header: 'TYPE', value: (k) => k.type },
        { header: 'EXPIRES', value: (k) => k.expirationDate ?? '' }, { header: 'UPDATED', value: (k) => k.updateDate ?? '' },
      ]));
    });
  return kv;
}

interface TriggerItem {
  abstractTrigger: { id: string; type: string };
  triggerContext: { namespace: string; flowId: string; triggerId: string; disabled?: boolean; nextExecutionDate?: string | null; date?: string | null };
}

export function triggerCommand(): Command {
  const tr = new Command('trigger').description('List triggers, enable or disable them, backfill schedules');

  tr.command('list').description('List triggers with their state')
    .option('-n, --namespace <namespace>', 'of this namespace (and its children)')
    .option('--flow <id>', 'of this flow')
    .action(async (o: { namespace?: string; flow?: string }, cmd: Command) => {
      const client = await connect(cmd);
      const page = await client.json<{ results: TriggerItem[]; total: number }>('GET', '/triggers/search', { query: { namespace: o.namespace, flowId: o.flow, size: 1000, page: 1 } });
      print(cmd, page, () => table(page.results, [
        { header: 'NAMESPACE', value: (t) => t.triggerContext.namespace }, { header: 'FLOW', value: (t) => t.triggerContext.flowId },
        { header: 'TRIGGER', value: (t) => t.triggerContext.triggerId }, { header: 'TYPE', value: (t) => t.abstractTrigger.type.split('.').pop() },
        { header: 'DISABLED', value: (t) => !!t.triggerContext.disabled }, { header: 'NEXT', value: (t) => t.triggerContext.nextExecutionDate ?? '' },
      ]));
    });

  tr.command('disable').description('Disable a trigger (--enable: enable it again)')
    .argument('<namespace>').argument('<flow>').argument('<trigger>')
    .option('--enable', 'enable it instead', false)
    .action(async (namespace: string, flowId: string, triggerId: string, o: { enable: boolean }, cmd: Command) => {
      const client = await connect(cmd);
      const r = await client.json('PUT', '/triggers', { body: { namespace, flowId, triggerId, disabled: !o.enable } });
      print(cmd, r, () => `${o.enable ? 'enabled' : 'disabled'} ${namespace}.${flowId} ${triggerId}`);
    });

  tr.command('backfill').description('Run a Schedule trigger for the dates of a past range (executions made as the schedule would have)')
    .argument('<namespace>').argument('<flow>').argument('<trigger>')
    .requiredOption('--start <date>', 'first date (ISO 8601)')
    .option('--end <date>', 'last date (ISO 8601; default: now)')
    .option('-i, --input <key=value>', 'an input of the executions (repeatable)', collect)
    .option('-l, --label <key=value>', 'a label of the executions (repeatable)', collect)
    .action(async (namespace: string, flowId: string, triggerId: string, o: { start: string; end?: string; input?: string[]; label?: string[] }, cmd: Command) => {
      const client = await connect(cmd);
      const labels = keyValues(o.label, '--label').map(([key, value]) => ({ key, value }));
      const backfill = { start: o.start, end: o.end ?? null, inputs: inputsObject(o.input), ...(labels.length ? { labels } : {}) };
      const r = await client.json('PUT', '/triggers', { body: { namespace, flowId, triggerId, backfill } });
      print(cmd, r, () => `backfill of ${namespace}.${flowId} ${triggerId} from ${o.start}${o.end ? ` to ${o.end}` : ''} started`);
    });
  return tr;
}
