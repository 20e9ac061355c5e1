// Kestra's `envs` variable: the server's environment variables whose name starts with the FLOW_ENV_VARS_PREFIX setting,
// read in templates as `envs.<name without the prefix, lowercase>` (ENV_MY_VAR → envs.my_var). The setting is empty by
// default, and then none is exposed. Secrets never are: `SECRET_*` and `FLOWPILOT_SECRET_*` are left out whatever
// the prefix. In cluster mode the operator hands the exposed variables (and the setting) to task Pods, so a task
// renders `envs` as the engine does.
import { dict } from '../core/keyed.js';
import { POD_SECRET_PREFIX, SECRET_ENV_PREFIX } from './env.js';

export const ENV_VARS_PREFIX_SETTING = 'FLOW_ENV_VARS_PREFIX';

/** The environment variables exposed to templates, by their full name (empty when FLOW_ENV_VARS_PREFIX is unset). */
export function exposedEnvVars(env: NodeJS.ProcessEnv): Record<string, string> {
  const prefix = env[ENV_VARS_PREFIX_SETTING] ?? '';
  const out = dict<string>();
  if (prefix === '') return out;
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !name.startsWith(prefix) || name.length === prefix.length) continue;
    if (name === ENV_VARS_PREFIX_SETTING || name.startsWith(SECRET_ENV_PREFIX) || name.startsWith(POD_SECRET_PREFIX)) continue;
    out[name] = value;
  }
  return out;
}

/** The `envs` variable: exposed variables by their name without the prefix, lowercase (empty: no `envs` at all). */
export function envsVariable(env: NodeJS.ProcessEnv): Record<string, string> {
  const prefix = env[ENV_VARS_PREFIX_SETTING] ?? '';
  const out = dict<string>();
  for (const [name, value] of Object.entries(exposedEnvVars(env))) out[name.slice(prefix.length).toLowerCase()] = value;
  return out;
}
