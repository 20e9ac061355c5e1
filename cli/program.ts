// The flowpilot command line: the program (commander) with its global options and commands, and `runCli`, which
// runs it and turns every failure into one line on stderr and an exit code (errors.ts), never a stack trace.
import { Command, CommanderError, Option } from 'commander';
import { CliError, ExitCodes } from './errors.js';
import { cleanup } from './context.js';
import { executionCommand, logsCommand, outcome, runCommand } from './commands/executions.js';
import { flowCommand } from './commands/flows.js';
import { kvCommand, triggerCommand } from './commands/kv-triggers.js';
import { OutputFormats } from './output.js';

function serverCommand(): Command {
  return new Command('server')
    .description('Start the service in embedded mode (what npm start does): REST API, web UI, controller and triggers in one process, data in DATA_DIR. Every setting of the README applies (environment)')
    .option('-p, --port <port>', 'port to listen on (PORT, default 8080)')
    .option('--host <host>', 'address to listen on (HOST, default 127.0.0.1; another needs authentication settings)')
    .option('--data-dir <dir>', 'where the store, files and working directories live (DATA_DIR, default ./data)')
    .action(async (o: { port?: string; host?: string; dataDir?: string }) => {
      const env = { ...process.env };
      if (o.port !== undefined) env.PORT = o.port;
      if (o.host !== undefined) env.HOST = o.host;
      if (o.dataDir !== undefined) env.DATA_DIR = o.dataDir;
      // The CLI's build (scripts/build-cli.mjs) leaves the server out: it runs from its sources through tsx, as npm start.
      if (!import.meta.url.endsWith('.ts')) (await import('tsx/esm/api')).register();
      const { main } = await import('../operator/main.js');
      await main(env); // keeps running until SIGINT/SIGTERM
      outcome.keepAlive = true;
    });
}

/** The whole program (a new one per call: commander keeps parse state). */
export function buildProgram(name = 'flowpilot', helpWidth?: number): Command {
  const program = new Command(name)
    .description('Command line of flowpilot: validate and deploy flows, run and follow executions, read logs, KV pairs and triggers, start the server')
    .version(process.env.npm_package_version ?? '0.1.0', '-V, --version')
    .option('-s, --server <url>', 'server root URL (env FLOWPILOT_URL; default http://localhost:8080)')
    .option('-t, --token <token>', 'bearer token (env FLOWPILOT_TOKEN): an API_TOKENS token, or a ServiceAccount token in cluster mode')
    .option('-u, --user <user:password>', 'HTTP basic credentials (env FLOWPILOT_USER)')
    .addOption(new Option('-o, --output <format>', 'output format').choices([...OutputFormats]).default('table'))
    .option('--kube', 'reach the API through the current kubeconfig context (the default when run as kubectl-flowpilot)')
    .option('--kube-context <name>', 'kubeconfig context to use (default: the current one)')
    .option('--kube-namespace <namespace>', 'Kubernetes namespace of the flowpilot release (default: the context\'s, else flowpilot)')
    .option('--kube-service <name>', 'the API Service (default flowpilot-api)')
    .option('--kube-port <port>', 'the API Service port (default 8080)')
    .showHelpAfterError('(add --help for usage)')
    .configureHelp({ sortSubcommands: false, showGlobalOptions: true, ...(helpWidth ? { helpWidth } : {}) })
    .exitOverride();
  for (const c of [serverCommand(), flowCommand(), runCommand(), executionCommand(), logsCommand(), kvCommand(), triggerCommand()]) {
    program.addCommand(c);
  }
  const exitEverywhere = (c: Command): void => {
    c.exitOverride();
    c.configureHelp({ showGlobalOptions: true, ...(helpWidth ? { helpWidth } : {}) });
    c.showHelpAfterError('(add --help for usage)');
    c.commands.forEach(exitEverywhere);
  };
  program.commands.forEach(exitEverywhere);
  return program;
}

/** Runs the CLI with `argv` (without node and the script); resolves with the exit code. */
export async function runCli(argv: string[], name?: string): Promise<number> {
  outcome.code = ExitCodes.SUCCESS;
  try {
    await buildProgram(name).parseAsync(argv, { from: 'user' });
    return outcome.code;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return ExitCodes.SUCCESS;
      return err.exitCode === 0 ? ExitCodes.SUCCESS : ExitCodes.USAGE; // commander printed the message
    }
    if (err instanceof CliError) {
      process.stderr.write(`error: ${err.message}\n`);
      return err.code;
    }
    const e = err as Error;
    process.stderr.write(`error: ${e?.message ?? String(err)}${process.env.FLOWPILOT_DEBUG ? `\n${e?.stack}` : ' (set FLOWPILOT_DEBUG=1 for details)'}\n`);
    return ExitCodes.FAILED;
  } finally {
    if (!outcome.keepAlive) cleanup();
  }
}
