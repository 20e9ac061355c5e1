// `flowpilot flow ...`: validate (offline), deploy a folder, get, list, export and delete flows.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { applyDeploy, DeployActions, planDeploy, type PlannedFlow } from '../deploy.js';
import { CliError, ExitCodes } from '../errors.js';
import { connect, enc, format, intOption, print } from '../context.js';
import { table } from '../output.js';
import type { CheckedDocument } from '../validate.js';

interface FlowJson { id: string; namespace: string; revision: number; description?: string; disabled?: boolean; updated?: string; source?: string; labels?: { key: string; value: string }[] }

/** The offline validator (the engine's model, schema and expression parser): loaded by the commands that check flows only. */
const validator = (): Promise<typeof import('../validate.js')> => import('../validate.js');

/** Prints the problems of `docs` (stderr) and throws when a flow is invalid. */
async function reportValidation(docs: CheckedDocument[], quietValid: boolean): Promise<void> {
  const { problemLine } = await validator();
  for (const d of docs) {
    for (const w of d.warnings) process.stderr.write(`${problemLine(d.file, w, 'warning')}\n`);
    for (const e of d.errors) process.stderr.write(`${problemLine(d.file, e)}\n`);
    if (!quietValid && d.errors.length === 0 && !d.skipped) process.stderr.write(`${d.file}:${d.line}: ok: ${d.namespace}.${d.id}\n`);
  }
  const invalid = docs.filter((d) => d.errors.length > 0).length;
  const flows = docs.filter((d) => !d.skipped).length;
  if (invalid > 0) throw new CliError(`${invalid} of ${flows} flows are invalid: fix the errors above (file:line: path: message)`, ExitCodes.FAILED);
  if (flows === 0) throw new CliError('no flow found: give .yaml/.yml files or folders that hold flows', ExitCodes.FAILED);
}

const planTable = (rows: PlannedFlow[]): string => table(rows, [
  { header: 'ACTION', value: (r) => r.action },
  { header: 'NAMESPACE', value: (r) => r.namespace },
  { header: 'FLOW', value: (r) => r.id },
  { header: 'REVISION', value: (r) => (r.previousRevision !== undefined && r.revision !== undefined && r.revision !== r.previousRevision ? `${r.previousRevision} -> ${r.revision}` : r.revision ?? r.previousRevision ?? '') },
  { header: 'FILE', value: (r) => r.file ?? '' },
]);

export function flowCommand(): Command {
  const flow = new Command('flow').description('Validate, deploy and read flows');

  flow.command('validate')
    .description('Validate flow files or folders offline with the engine\'s validator (the messages of POST /api/v1/flows/validate); Kubernetes Flow manifests are checked by their spec, other manifests skipped. Exit 1 when a flow is invalid')
    .argument('<paths...>', 'flow files (.yaml, .yml; several documents per file allowed), folders (walked recursively), or - for standard input')
    .action(async (paths: string[], _o, cmd: Command) => {
      const docs = await (await validator()).checkPaths(paths);
      const fmt = format(cmd);
      if (fmt !== 'table') {
        print(cmd, docs.map(({ source: _s, ...d }) => d));
        if (docs.some((d) => d.errors.length > 0)) throw new CliError(`${docs.filter((d) => d.errors.length > 0).length} flows are invalid`, ExitCodes.FAILED);
        return;
      }
      await reportValidation(docs, false);
      const n = docs.filter((d) => !d.skipped).length;
      process.stdout.write(`${n} flow${n === 1 ? '' : 's'} valid\n`);
    });

  flow.command('deploy')
    .description('Sync a folder of flows to the server: validate them all, then create new ones and update changed ones (a revision only where the source changed); --delete also removes the flows of each namespace that are not in the folder')
    .argument('<dir>', 'folder (or file) of flows')
    .option('-n, --namespace <namespace>', 'the one namespace the flows must be in (with --delete: the namespace to prune)')
    .option('--delete', 'delete the live flows of the namespace(s) that the folder does not hold', false)
    .option('--dry-run', 'print the plan (create, update, unchanged, delete) and change nothing', false)
    .action(async (dir: string, o: { namespace?: string; delete: boolean; dryRun: boolean }, cmd: Command) => {
      const docs = await (await validator()).checkPaths([dir]);
      if (docs.some((d) => d.errors.length > 0) || format(cmd) === 'table') await reportValidation(docs, true);
      const client = await connect(cmd);
      const plans = await planDeploy(client, docs, { namespace: o.namespace, delete: o.delete });
      const rows = o.dryRun ? [...plans.values()].flat() : await applyDeploy(client, docs, plans);
      print(cmd, rows, () => {
        const counts = DeployActions.map((a) => [a, rows.filter((r) => r.action === a).length] as const).filter(([, n]) => n > 0).map(([a, n]) => `${n} ${a}`).join(', ');
        return `${planTable(rows)}\n${o.dryRun ? 'dry run, nothing changed: ' : ''}${counts || 'nothing to do'}`;
      });
    });

  flow.command('get')
    .description('Show a flow (--source: its YAML source only)')
    .argument('<namespace>').argument('<id>')
    .option('--revision <n>', 'a given revision')
    .option('--source', 'print the source as written', false)
    .action(async (namespace: string, id: string, o: { revision?: string; source: boolean }, cmd: Command) => {
      const client = await connect(cmd);
      const f = await client.json<FlowJson>('GET', `/flows/${enc(namespace)}/${enc(id)}`, { query: { revision: intOption(o.revision, '--revision'), source: o.source || undefined } });
      if (o.source) { process.stdout.write(f.source!.endsWith('\n') ? f.source! : `${f.source}\n`); return; }
      print(cmd, f, () => [
        `namespace: ${f.namespace}`, `id: ${f.id}`, `revision: ${f.revision}`, `disabled: ${!!f.disabled}`,
        ...(f.description ? [`description: ${f.description}`] : []), ...(f.updated ? [`updated: ${f.updated}`] : []),
        ...(f.labels?.length ? [`labels: ${f.labels.map((l) => `${l.key}=${l.value}`).join(', ')}`] : []),
      ].join('\n'));
    });

  flow.command('list')
    .description('List flows (all, or of a namespace and its children)')
    .argument('[namespace]')
    .option('-q, --query <text>', 'text the id, namespace or description contains')
    .option('--size <n>', 'at most this many', '100')
    .action(async (namespace: string | undefined, o: { query?: string; size: string }, cmd: Command) => {
      const client = await connect(cmd);
      const page = await client.json<{ results: FlowJson[]; total: number }>('GET', '/flows/search', { query: { namespace, q: o.query, size: intOption(o.size, '--size'), page: 1 } });
      print(cmd, page, () => table(page.results, [
        { header: 'NAMESPACE', value: (f) => f.namespace }, { header: 'ID', value: (f) => f.id },
        { header: 'REVISION', value: (f) => f.revision }, { header: 'DISABLED', value: (f) => !!f.disabled },
        { header: 'DESCRIPTION', value: (f) => f.description ?? '' },
      ]) + (page.total > page.results.length ? `\n(${page.results.length} of ${page.total}: use --size)` : ''));
    });

  flow.command('export')
    .description('Write the sources of a namespace\'s flows: one <namespace>.<id>.yaml file each in --dir, or one multi-document YAML on stdout')
    .argument('<namespace>')
    .option('-d, --dir <dir>', 'folder to write the files into (created when missing)')
    .action(async (namespace: string, o: { dir?: string }, cmd: Command) => {
      const client = await connect(cmd);
      const list = await client.json<FlowJson[]>('GET', `/flows/${enc(namespace)}`);
      const sources: [string, string][] = [];
      for (const f of list) {
        const full = await client.json<FlowJson>('GET', `/flows/${enc(f.namespace)}/${enc(f.id)}`, { query: { source: true } });
        sources.push([`${f.namespace}.${f.id}.yaml`, full.source!.endsWith('\n') ? full.source! : `${full.source}\n`]);
      }
      if (o.dir) {
        mkdirSync(o.dir, { recursive: true });
        for (const [name, source] of sources) writeFileSync(join(o.dir, name), source);
        process.stderr.write(`${sources.length} flows written to ${o.dir}\n`);
      } else process.stdout.write(sources.map(([, s]) => s).join('---\n'));
    });

  flow.command('delete')
    .description('Delete a flow (its revisions and executions stay readable)')
    .argument('<namespace>').argument('<id>')
    .action(async (namespace: string, id: string, _o, cmd: Command) => {
      const client = await connect(cmd);
      await client.raw('DELETE', `/flows/${enc(namespace)}/${enc(id)}`);
      process.stderr.write(`deleted ${namespace}.${id}\n`);
    });
  return flow;
}
