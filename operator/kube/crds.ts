// The CustomResourceDefinitions of flowpilot.io/v1 (apiextensions.k8s.io/v1, structural schemas, no CEL so they
// install on Kubernetes 1.24+). The Flow spec comes from the schema the engine validates flows with; the other
// kinds are written here. `scripts/gen-crds.ts` writes them to crds/ and charts/flowpilot/crds/.
import { stringify } from 'yaml';
import { ExecutionStates, isTerminal } from '../core/types.js';
import { flowCrdSchema } from '../model/crd-schema.js';
import { NAMESPACE_PATTERN } from '../model/schema-common.js';
import { FLOW_SPEC_DOCS } from './crd-docs.js';
import { GROUP, KINDS, VERSION, type KindInfo } from './names.js';

export type Schema = Record<string, unknown>;

const PRESERVE = 'x-kubernetes-preserve-unknown-fields';
const str = (description: string, extra: Schema = {}): Schema => ({ type: 'string', description, ...extra });
const int = (description: string, extra: Schema = {}): Schema => ({ type: 'integer', format: 'int64', description, ...extra });
const num = (description: string): Schema => ({ type: 'number', description });
const bool = (description: string): Schema => ({ type: 'boolean', description });
/** Any JSON value (object, list, string, number, boolean). */
const anyJson = (description: string): Schema => ({ [PRESERVE]: true, description });
/** A JSON object of any shape. */
const openObject = (description: string): Schema => ({ type: 'object', [PRESERVE]: true, description });
const obj = (description: string, properties: Record<string, Schema>, required?: string[]): Schema =>
  ({ type: 'object', description, ...(required ? { required } : {}), properties });
const arr = (description: string, items: Schema): Schema => ({ type: 'array', description, items });

const observedGeneration = int('metadata.generation of the spec this status was computed from.');

/** The standard Kubernetes condition list (metav1.Condition), keyed by type. */
const conditions: Schema = {
  ...arr('Conditions of the resource (Ready is True when the operator accepted the current spec).', obj('One condition.', {
    type: str('Condition type, for example Ready.'),
    status: str('True, False or Unknown.', { enum: ['True', 'False', 'Unknown'] }),
    observedGeneration: int('metadata.generation the condition was set for.'),
    lastTransitionTime: str('When the status last changed (RFC 3339).', { format: 'date-time' }),
    reason: str('Machine-readable reason in CamelCase.'),
    message: str('Human-readable details.'),
  }, ['type', 'status'])),
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
};

/** Adds FLOW_SPEC_DOCS descriptions to the flow schema (a copy); paths as in crd-docs.ts. */
function describeFlow(node: Schema, path = ''): Schema {
  const out: Schema = { ...node };
  const doc = FLOW_SPEC_DOCS[path];
  if (doc && out.description === undefined) out.description = doc;
  const props = node.properties as Record<string, Schema> | undefined;
  if (props) {
    out.properties = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, describeFlow(v, path ? `${path}.${k}` : k)]));
  }
  if (node.items) out.items = describeFlow(node.items as Schema, `${path}[]`);
  if (typeof node.additionalProperties === 'object') out.additionalProperties = describeFlow(node.additionalProperties as Schema, `${path}{}`);
  return out;
}

type ColumnType = 'string' | 'integer' | 'number' | 'boolean' | 'date';
interface Column { name: string; type: ColumnType; jsonPath: string; description: string; priority?: number }
const col = (name: string, type: ColumnType, jsonPath: string, description: string, priority?: number): Column =>
  ({ name, type, jsonPath, description, ...(priority ? { priority } : {}) });
const AGE = col('AGE', 'date', '.metadata.creationTimestamp', 'Time since creation.');
const FLOW_NS = col('FLOW-NS', 'string', '.spec.namespace', 'Flow namespace (spec.namespace; not the Kubernetes namespace).');

interface CrdParts { description: string; spec: Schema; status?: Schema; columns: Column[] }

function crd(info: KindInfo, parts: CrdParts): Schema {
  const properties: Record<string, Schema> = {
    apiVersion: str('Versioned schema of this representation of an object (flowpilot.io/v1).'),
    kind: str(`Kind of this object (${info.kind}).`),
    metadata: { type: 'object' },
    spec: parts.spec,
  };
  if (parts.status) properties.status = parts.status;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${info.plural}.${GROUP}`, labels: { 'app.kubernetes.io/part-of': 'flowpilot' } },
    spec: {
      group: GROUP,
      names: {
        kind: info.kind, listKind: `${info.kind}List`, plural: info.plural, singular: info.singular,
        shortNames: [...info.shortNames], categories: ['flowpilot'],
      },
      scope: 'Namespaced',
      versions: [{
        name: VERSION, served: true, storage: true,
        ...(parts.status ? { subresources: { status: {} } } : {}),
        additionalPrinterColumns: parts.columns,
        schema: { openAPIV3Schema: { type: 'object', description: parts.description, required: ['spec'], properties } },
      }],
    },
  };
}

/**
 * The Flow spec schema, plus `taskDefaults`: Kestra's former name of pluginDefaults, which the engine still accepts
 * (operator/model/normalize.ts) and a structural schema would otherwise prune silently on create.
 */
function flowSpecSchema(): Schema {
  const spec = describeFlow(flowCrdSchema() as Schema);
  const props = spec.properties as Record<string, Schema>;
  if (props.pluginDefaults && !props.taskDefaults) {
    props.taskDefaults = { ...props.pluginDefaults, description: 'Former name of pluginDefaults (Kestra), accepted as such; use pluginDefaults.' };
  }
  return spec;
}

function flowCrd(): Schema {
  return crd(KINDS.Flow, {
    description: 'A flow: a declarative workflow (id, flow namespace, tasks, inputs, triggers...). Applying it saves a new revision.',
    spec: flowSpecSchema(),
    status: obj('State of the flow as seen by the operator.', {
      revision: int('Current revision number (a FlowRevision object holds each revision).'),
      observedGeneration,
      conditions,
      message: str('Validation errors of the current spec, or other details.'),
    }),
    columns: [
      col('ID', 'string', '.spec.id', 'Flow id.'), FLOW_NS,
      col('REVISION', 'integer', '.status.revision', 'Current revision.'),
      col('READY', 'string', '.status.conditions[?(@.type=="Ready")].status', 'Whether the current spec is valid and saved.'),
      AGE,
    ],
  });
}

function flowRevisionCrd(): Schema {
  return crd(KINDS.FlowRevision, {
    description: 'An immutable snapshot of one revision of a flow, created by the operator (never edited).',
    spec: obj('The saved revision.', {
      namespace: str('Flow namespace.'),
      id: str('Flow id.'),
      revision: int('Revision number (1, 2, ...).', { minimum: 1 }),
      source: str('YAML source of this revision.'),
      flow: openObject('The validated flow document of this revision.'),
    }, ['namespace', 'id', 'revision', 'flow']),
    columns: [FLOW_NS, col('ID', 'string', '.spec.id', 'Flow id.'), col('REVISION', 'integer', '.spec.revision', 'Revision number.'), AGE],
  });
}

const COMMAND_TYPES = ['kill', 'resume', 'restart', 'set-labels', 'change-state'];

function executionCrd(): Schema {
  return crd(KINDS.Execution, {
    description: 'One execution of a flow. Create one to start a flow; the operator runs it and reports in status.',
    spec: obj('What to run, and the commands sent to the running execution.', {
      namespace: str('Flow namespace of the flow to run.'),
      flowId: str('Id of the flow to run.'),
      flowRevision: int('Revision of the flow to run; latest when omitted.', { minimum: 1 }),
      inputs: openObject('Input values by input id (validated against the flow inputs).'),
      labels: arr('Execution labels (added to the flow labels).', obj('One label.', {
        key: str('Label key.'), value: str('Label value.'),
      }, ['key', 'value'])),
      trigger: openObject('Origin of the execution when a trigger started it: id, type, variables.'),
      parent: obj('Parent execution when started by a Subflow or ForEachItem task.', {
        executionId: str('Parent execution id.'),
        taskRunId: str('Task run of the parent that started this execution.'),
        namespace: str('Flow namespace of the parent flow.'),
        flowId: str('Id of the parent flow.'),
      }),
      commands: arr('Commands for the execution, appended in order; status.acked is the last seq consumed.', obj('One command.', {
        seq: int('Sequence number, increasing by 1 from 1.', { minimum: 1 }),
        type: str('kill (stop the execution), resume (continue a paused task), restart (rerun failed tasks), set-labels (replace the labels of an ended execution) or change-state (move an ended execution to another terminal state).', { enum: COMMAND_TYPES }),
        inputs: anyJson('Inputs of a resume command (on-resume inputs of a Pause task).'),
        labels: arr('Labels of a set-labels command.', obj('One label.', { key: str('Label key.'), value: str('Label value.') }, ['key', 'value'])),
        state: str('Terminal state of a change-state command.', { enum: [...ExecutionStates].filter(isTerminal) }),
        created: str('When the command was sent (RFC 3339).'),
      }, ['seq', 'type'])),
    }, ['namespace', 'flowId']),
    status: obj('Progress of the execution, written by the operator only.', {
      state: str('Execution state.', { enum: [...ExecutionStates] }),
      flowRevision: int('Revision of the flow the execution runs: spec.flowRevision, or the latest revision when it started.'),
      startDate: str('Start date (RFC 3339).'),
      endDate: str('End date (RFC 3339), once terminal.'),
      duration: str('ISO 8601 duration between start and end (or now).'),
      taskRunCount: int('Number of task runs so far.'),
      record: openObject("The engine's execution record (task runs, outputs, state history)."),
      recordGz: str('The execution record as gzip-compressed JSON in base64, when it is too large for record.'),
      acked: int('Seq of the last command of spec.commands the operator consumed.'),
      observedGeneration,
      message: str('Why the execution failed outside a task, or other details.'),
    }),
    columns: [
      col('STATE', 'string', '.status.state', 'Execution state.'),
      col('FLOW', 'string', '.spec.flowId', 'Flow id.'),
      FLOW_NS,
      col('REVISION', 'integer', '.status.flowRevision', 'Revision of the flow it runs.'),
      col('DURATION', 'string', '.status.duration', 'Duration (ISO 8601).'),
      AGE,
    ].map((c) => (c === FLOW_NS ? { ...c, priority: 1 } : c)),
  });
}

export const KV_TYPES = ['STRING', 'NUMBER', 'BOOLEAN', 'DATETIME', 'DATE', 'DURATION', 'JSON'];

function kvCrd(): Schema {
  return crd(KINDS.KVPair, {
    description: 'A key-value pair of a flow namespace (read with kv() and the KV tasks).',
    spec: obj('The pair.', {
      namespace: str('Flow namespace the pair belongs to.'),
      key: str('Key (any ASCII string).'),
      type: str('Type of the value.', { enum: KV_TYPES }),
      value: anyJson('The value: any JSON (string, number, boolean, list or object).'),
      expirationDate: str('Date (RFC 3339) after which the pair no longer exists (from the ttl).'),
      updated: str('When the value was last written (RFC 3339).'),
    }, ['namespace', 'key']),
    columns: [FLOW_NS, col('KEY', 'string', '.spec.key', 'Key.'), col('TYPE', 'string', '.spec.type', 'Value type.'),
      col('EXPIRES', 'string', '.spec.expirationDate', 'Expiration date.', 1), AGE],
  });
}

function flowNamespaceCrd(): Schema {
  const pluginDefault = obj('Defaults for one task type.', {
    type: str('Task type (or type prefix) the defaults apply to.'),
    values: openObject('Property values to apply.'),
    forced: bool('true overrides values set on the task itself.'),
  }, ['type', 'values']);
  return crd(KINDS.FlowNamespace, {
    description: 'A flow namespace as a thing (Kestra\'s Namespace): variables and plugin defaults inherited by the flows of the namespace and of its children.',
    spec: obj('The namespace.', {
      id: str('Flow namespace (dotted, e.g. company.team; not the Kubernetes namespace).', { pattern: NAMESPACE_PATTERN, maxLength: 150 }),
      description: str('Description.'),
      variables: openObject('Variables read by templates as namespace.<name>; a child namespace\'s win over its parents\'.'),
      pluginDefaults: arr('Plugin defaults applied to the tasks of its flows and of its children\'s flows, after each flow\'s own.', pluginDefault),
      updated: str('When the namespace was last written (RFC 3339).'),
    }, ['id']),
    columns: [col('FLOW-NS', 'string', '.spec.id', 'Flow namespace (spec.id; not the Kubernetes namespace).'),
      col('DESCRIPTION', 'string', '.spec.description', 'Description.', 1), AGE],
  });
}

function triggerStateCrd(): Schema {
  return crd(KINDS.TriggerState, {
    description: 'Durable state of one trigger of one flow (schedule progress, backfill, MultipleCondition windows).',
    spec: obj('The trigger state.', {
      namespace: str('Flow namespace.'),
      flowId: str('Flow id.'),
      triggerId: str('Trigger id within the flow.'),
      disabled: bool('Disabled through the API (a trigger with disabled: true in the flow is disabled too).'),
      state: openObject('Trigger-specific state: last evaluated date, backfill progress, condition windows...'),
      updated: str('When the state was last written (RFC 3339).'),
    }, ['namespace', 'flowId', 'triggerId']),
    columns: [FLOW_NS, col('FLOW', 'string', '.spec.flowId', 'Flow id.'), col('TRIGGER', 'string', '.spec.triggerId', 'Trigger id.'),
      col('DISABLED', 'boolean', '.spec.disabled', 'Disabled through the API.'), AGE],
  });
}

/** The lifecycle states of operator/inference/db.ts JobState, and RUNNING (written by versions before the one job model). */
export const INFERENCE_STATUSES = ['QUEUED', 'VALIDATING', 'IN_PROGRESS', 'FINALIZING', 'CANCELLING', 'RUNNING', 'SUCCESS', 'FAILED', 'CANCELLED', 'EXPIRED'];

function inferenceJobCrd(): Schema {
  return crd(KINDS.InferenceJob, {
    description: 'A batch inference job (POST /v1/completions in cluster mode): a model run over inputs in the caller\'s bucket.',
    spec: obj('The batch inference request.', {
      model: str('Model identifier (llama3_70b, llama2_70b, llama2_7b, codellama_70b, mixtral_8x7, mistral_7b, or a configured id).'),
      question: str('Prompt applied to the inputs.'),
      system_prompt: str('System prompt.'),
      list_inputs: arr('Inline inputs.', anyJson('One input (usually a string).')),
      input_json_file: str('Name of the input JSON file in the session folder of the bucket.'),
      storage_provider: str('s3 (S3-type object storage) or gcs.', { enum: ['s3', 'gcs'] }),
      bucket_name: str('Bucket that holds input and output files.'),
      session: str('Session name; names the folder <access_token>/<session> used for the job.'),
      max_tokens: int('Number of tokens to output per answer.', { minimum: 1 }),
      role_arn: str('Access role the service assumes to reach the bucket (S3-type storage).'),
      region: str('Region of the bucket.'),
      return_output: bool('Whether the result includes the output.'),
      structured_output: openObject('JSON schema of each generated answer.'),
      seed: int('Sampling seed (extension; default 0).'),
      temperature: num('Sampling temperature (extension).'),
      completion_window: int('Seconds after submission at which unfinished items expire (extension).', { minimum: 1 }),
      expiresAt: str('End of the completion window (RFC 3339): unfinished items then expire, partial results kept.'),
      tokenHash: str('Keyed hash (HMAC under ENCRYPTION_KEY) of the access token that submitted the job (identifies the caller; never the token); an unkeyed SHA-256 in jobs of earlier versions.'),
      folderSealed: str('The bucket folder <access_token>/<session> sealed with ENCRYPTION_KEY (AES-256-GCM, bound to the task id): lets the API read return_output results without the token.'),
      tokenSecretRef: obj('Secret holding the access token (it names the bucket folder); the runner reads it.', {
        name: str('Secret name (same Kubernetes namespace).'), key: str('Key in the Secret.'),
      }, ['name', 'key']),
      idempotencyKey: str('Idempotency-Key header of the submission.'),
      requestHash: str('Hash of the request body (to detect a reused idempotency key with another body).'),
      cancelRequested: bool('Set by the owner\'s cancel (POST /v1/batches/{id}/cancel): the runner stops and ends the job CANCELLED with what is done; a job without a runner yet ends CANCELLED at once.'),
    }, ['model', 'bucket_name', 'session']),
    status: obj('Progress of the job, written by the operator.', {
      status: str('The lifecycle state: QUEUED, VALIDATING, IN_PROGRESS, FINALIZING, then SUCCESS, FAILED, CANCELLED or EXPIRED (final); RUNNING from earlier versions.', { enum: INFERENCE_STATUSES }),
      total: int('Number of inputs.'),
      done: int('Inputs answered.'),
      failed: int('Inputs that failed.'),
      promptTokens: int('Prompt tokens consumed.'),
      completionTokens: int('Completion tokens generated.'),
      backend: str('Model backend that ran the job.'),
      error: str('Why the job failed.'),
      resultPaths: arr('Result files of jobs of earlier versions (object keys).', str('One object key.')),
      resultStem: str('Stem of the result files inside the session folder, fixed before the first write.'),
      resultFile: str('Name of the final JSON document inside the session folder.'),
      modelFile: str('GGUF file or server URL that answered.'),
      started: str('Start date (RFC 3339).'),
      finished: str('End date (RFC 3339).'),
      observedGeneration,
      message: str('Details.'),
    }),
    columns: [
      col('STATUS', 'string', '.status.status', 'Job status.'), col('MODEL', 'string', '.spec.model', 'Model id.'),
      col('DONE', 'integer', '.status.done', 'Inputs answered.'), col('TOTAL', 'integer', '.status.total', 'Inputs.'), AGE,
    ],
  });
}

/** Every CRD of flowpilot.io, in a stable order. */
export function buildCrds(): Schema[] {
  return [flowCrd(), flowRevisionCrd(), executionCrd(), kvCrd(), flowNamespaceCrd(), triggerStateCrd(), inferenceJobCrd()];
}

/** File name of a CRD in crds/: `<plural>.flowpilot.io.yaml`. */
export const crdFileName = (crd: Schema): string => `${(crd.metadata as { name: string }).name}.yaml`;

/** The files gen-crds writes (file name → YAML text), identical in crds/ and charts/flowpilot/crds/. */
export function renderCrdFiles(): Record<string, string> {
  const header = '# Generated by scripts/gen-crds.ts from operator/kube/crds.ts (npm run gen:crds). Do not edit.\n';
  return Object.fromEntries(buildCrds().map((c) => [crdFileName(c), header + stringify(c, { lineWidth: 0, aliasDuplicateObjects: false })]));
}
