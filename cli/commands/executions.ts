// `flowpilot run`, `flowpilot execution ...` and `flowpilot logs`: start executions and follow them to their end
// (the exit code says how it ended), read, list, kill, restart, replay and resume them, print or follow their logs.
import { Command } from 'commander';
import { isTerminal } from '../../operator/core/types.js';
import type { ApiClient } from '../client.js';
import { CliError, ExitCodes, exitCodeOfState, usageError } from '../errors.js';
import { collect, connect, enc, format, inputsForm, inputsObject, intOption, labelsQuery, print } from '../context.js';
import { table, yamlText } from '../output.js';
import { followExecution, logLineText, printLogs, type ExecutionJson, type LogLineJson } from '../progress.js';

/** The exit code a command ends with (set by commands that wait for an execution). */
export const outcome: { code: number; keepAlive?: boolean } = { code: 0 };

/** Prints the final execution (table: its state line and outputs) and sets the exit code from its state. */
function finish(cmd: Command, e: ExecutionJson): void {
  print(cmd, e, () => {
    const head = `execution ${e.id} ${e.state.current}${e.state.duration ? ` in ${e.state.duration}` : ''} (${e.namespace}.${e.flowId}${e.flowRevision ? ` revision ${e.flowRevision}` : ''})`;
    const outputs = e.outputs && Object.keys(e.outputs).length ? `\noutputs:\n${yamlText(e.outputs).replace(/^/gm, '  ')}` : '';
    return head + outputs;
  });
  outcome.code = exitCodeOfState(e.state.current) ?? ExitCodes.SUCCESS;
}

interface WaitOptions { wait?: boolean; follow?: boolean; level?: string }

/** Either the answer as it is (no wait), or the execution followed to its end. */
async function waitOrPrint(cmd: Command, client: ApiClient, e: ExecutionJson, o: WaitOptions): Promise<void> {
  if (!o.wait && !o.follow) {
    print(cmd, e, () => `execution ${e.id} ${e.state.current} (${e.namespace}.${e.flowId})`);
    return;
  }
  if (format(cmd) === 'table') process.stderr.write(`execution ${e.id} of ${e.namespace}.${e.flowId} ${e.state.current}\n`);
  const final = isTerminal(e.state.current) && !o.follow ? e : await followExecution(client, e.id, { logs: o.follow, minLevel: o.level });
  finish(cmd, final);
}

const waitOptions = (c: Command): Command => c
  .option('-w, --wait', 'follow the execution to its end (progress on stderr), print its outputs, exit with its state\'s code', false)
  .option('-f, --follow', 'as --wait, and print its log lines as they come', false)
  .option('--level <level>', 'with --follow: the lowest log level shown (TRACE, DEBUG, INFO, WARN, ERROR)');

const executionTable = (list: ExecutionJson[]): string => table(list, [
  { header: 'ID', value: (e) => e.id }, { header: 'NAMESPACE', value: (e) => e.namespace }, { header: 'FLOW', value: (e) => e.flowId },
  { header: 'STATE', value: (e) => e.state.current }, { header: 'START', value: (e) => e.state.startDate ?? '' },
  { header: 'DURATION', value: (e) => e.state.duration ?? '' },
]);

export function runCommand(): Command {
  return waitOptions(new Command('run')
    .description('Start an execution of a flow; with --wait or --follow, show its progress, print its outputs and exit with the code of its final state')
    .argument('<namespace>').argument('<flow>')
    .option('-i, --input <key=value>', 'an input (repeatable); key=@path uploads a file', collect)
    .option('-l, --label <key=value>', 'a label of the execution (repeatable)', collect)
    .option('--revision <n>', 'run this revision of the flow'))
    .action(async (namespace: string, flow: string, o: WaitOptions & { input?: string[]; label?: string[]; revision?: string }, cmd: Command) => {
      const body = inputsForm(o.input);
      const client = await connect(cmd);
      const e = await client.json<ExecutionJson>('POST', `/executions/${enc(namespace)}/${enc(flow)}`, {
        query: { labels: labelsQuery(o.label), revision: intOption(o.revision, '--revision') }, body,
      });
      await waitOrPrint(cmd, client, e, o);
    });
}

export function executionCommand(): Command {
  const ex = new Command('execution').description('Read, list and act on executions');

  waitOptions(ex.command('get').description('Show an execution (--wait: follow it to its end)').argument('<id>'))
    .action(async (id: string, o: WaitOptions, cmd: Command) => {
      const client = await connect(cmd);
      const e = await client.json<ExecutionJson>('GET', `/executions/${enc(id)}`);
      if (o.wait || o.follow) return waitOrPrint(cmd, client, e, o);
      print(cmd, e, () => {
        const runs = e.taskRunList ?? [];
        return `execution ${e.id} ${e.state.current}${e.state.duration ? ` in ${e.state.duration}` : ''} (${e.namespace}.${e.flowId})\n`
          + table(runs, [
            { header: 'TASK', value: (r) => r.taskId }, { header: 'VALUE', value: (r) => r.value ?? '' },
            { header: 'STATE', value: (r) => r.state.current }, { header: 'DURATION', value: (r) => r.state.duration ?? '' },
          ]);
      });
    });

  ex.command('list').description('List executions, newest first')
    .option('-n, --namespace <namespace>', 'of this namespace (and its children)')
    .option('--flow <id>', 'of this flow')
    .option('--state <state>', 'in this state (repeatable)', collect)
    .option('-l, --label <key=value>', 'with this label (repeatable)', collect)
    .option('--size <n>', 'at most this many', '25')
    .action(async (o: { namespace?: string; flow?: string; state?: string[]; label?: string[]; size: string }, cmd: Command) => {
      const client = await connect(cmd);
      const page = await client.json<{ results: ExecutionJson[]; total: number }>('GET', '/executions/search', {
        query: { namespace: o.namespace, flowId: o.flow, state: o.state, labels: labelsQuery(o.label), size: intOption(o.size, '--size'), page: 1, summary: true },
      });
      print(cmd, page, () => executionTable(page.results));
    });

  ex.command('kill').description('Kill a running execution').argument('<id>')
    .action(async (id: string, _o, cmd: Command) => {
      const client = await connect(cmd);
      await client.raw('DELETE', `/executions/${enc(id)}/kill`);
      process.stderr.write(`kill of ${id} requested\n`);
    });

  waitOptions(ex.command('restart').description('Restart a FAILED or KILLED execution from its failed task runs').argument('<id>'))
    .action(async (id: string, o: WaitOptions, cmd: Command) => {
      const client = await connect(cmd);
      await waitOrPrint(cmd, client, await client.json<ExecutionJson>('POST', `/executions/${enc(id)}/restart`), o);
    });

  waitOptions(ex.command('replay').description('Replay an execution as a new one (from a task run with --task-run-id)').argument('<id>')
    .option('--task-run-id <id>', 'replay from this task run'))
    .action(async (id: string, o: WaitOptions & { taskRunId?: string }, cmd: Command) => {
      const client = await connect(cmd);
      await waitOrPrint(cmd, client, await client.json<ExecutionJson>('POST', `/executions/${enc(id)}/replay`, { query: { taskRunId: o.taskRunId } }), o);
    });

  waitOptions(ex.command('resume').description('Resume a PAUSED execution, with the values its Pause task asks for').argument('<id>')
    .option('-i, --input <key=value>', 'a resume value (repeatable; JSON values are parsed)', collect))
    .action(async (id: string, o: WaitOptions & { input?: string[] }, cmd: Command) => {
      const client = await connect(cmd);
      const e = await client.json<ExecutionJson>('POST', `/executions/${enc(id)}/resume`, { body: inputsObject(o.input) });
      await waitOrPrint(cmd, client, e, o);
    });
  return ex;
}

export function logsCommand(): Command {
  return new Command('logs')
    .description('Print the log lines of an execution (--follow: as they come, until it ends)')
    .argument('<id>', 'execution id')
    .option('-f, --follow', 'follow new lines until the execution ends', false)
    .option('--level <level>', 'the lowest level shown (TRACE, DEBUG, INFO, WARN, ERROR)')
    .option('--task <taskId>', 'only the lines of this task (not with --follow)')
    .action(async (id: string, o: { follow: boolean; level?: string; task?: string }, cmd: Command) => {
      if (o.follow && o.task) throw usageError('--task cannot be combined with --follow');
      const client = await connect(cmd);
      if (o.follow) {
        if (format(cmd) === 'table') await printLogs(client, id, o.level, (l) => process.stdout.write(`${l}\n`));
        else {
          for await (const ev of client.events(`/logs/${enc(id)}/follow`, { minLevel: o.level })) {
            if (ev.id === 'progress') process.stdout.write(`${JSON.stringify(ev.data)}\n`);
          }
        }
        return;
      }
      const res = await client.raw('GET', `/logs/${enc(id)}`, { query: { minLevel: o.level, taskId: o.task } });
      const lines = res.body as LogLineJson[];
      if (lines.length === 0) {
        const known = await client.raw('GET', `/executions/${enc(id)}`, { accept: [404] });
        if (known.status === 404) throw new CliError(`execution '${id}' not found: check the id (flowpilot execution list)`, ExitCodes.SERVER);
      }
      print(cmd, lines, () => lines.map(logLineText).join('\n'));
      if (res.headers.get('x-truncated') === 'true') process.stderr.write(`(more lines than the server returns at once: flowpilot logs ${id} --follow prints them all)\n`);
    });
}
