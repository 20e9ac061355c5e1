#!/usr/bin/env bash
# The deploy step of the CI action (action.yml) and of the GitLab CI snippet (docs/cli.md): validates every flow of a
# folder offline with the CLI, then deploys it to a server (one plan line per flow). Settings (environment):
# FLOWPILOT_URL, FLOWPILOT_TOKEN (or FLOWPILOT_USER user:password), FLOWS_FOLDER (default flows), FLOWS_NAMESPACE
# (optional: the one namespace the flows must be in), FLOWS_DELETE (true: delete the namespace's flows not in the folder),
# FLOWS_DRY_RUN (true: print the plan only), FLOWPILOT_CLI (the command to run; default this repository's bin).
# Exit code: the CLI's (1 invalid flow, 5 server unreachable, 6 refused, 7 authentication...; docs/cli.md).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
read -r -a cli <<< "${FLOWPILOT_CLI:-node $here/../bin/flowpilot.mjs}"
folder="${FLOWS_FOLDER:-flows}"
args=(flow deploy "$folder")
[ -n "${FLOWS_NAMESPACE:-}" ] && args+=(--namespace "$FLOWS_NAMESPACE")
case "${FLOWS_DELETE:-false}" in true) args+=(--delete) ;; false|'') ;; *) echo "error: FLOWS_DELETE must be true or false, not '${FLOWS_DELETE}'" >&2; exit 2 ;; esac
case "${FLOWS_DRY_RUN:-false}" in true) args+=(--dry-run) ;; false|'') ;; *) echo "error: FLOWS_DRY_RUN must be true or false, not '${FLOWS_DRY_RUN}'" >&2; exit 2 ;; esac
if [ -z "${FLOWPILOT_URL:-}" ]; then echo "error: FLOWPILOT_URL is not set: give the action's 'server' input (the server's root URL)" >&2; exit 2; fi

echo "::group::validate $folder"
"${cli[@]}" flow validate "$folder"
echo "::endgroup::"
"${cli[@]}" "${args[@]}"
