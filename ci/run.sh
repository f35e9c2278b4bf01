#!/usr/bin/env bash
# The Friction deploy gate (ci/action.yml): records the deploy, then waits for its verdict. Inputs arrive as
# INPUT_* and FRICTION_* variables; GITHUB_SHA and GITHUB_RUN_ID are the runner's. Exit codes are
# the CLI's: 0 recorded and PASS (or WARN without fail-on warn), 1 FAIL, 2 usage, connection or API errors.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
friction=(node "$here/friction.mjs")

if ! command -v node >/dev/null; then
  echo "::error::the Friction deploy gate needs node (20 or newer) on the runner" >&2
  exit 2
fi

commit="${INPUT_COMMIT:-${GITHUB_SHA:-}}"
idempotency_key="${INPUT_IDEMPOTENCY_KEY:-}"
if [[ -z "$idempotency_key" && -n "${GITHUB_RUN_ID:-}" ]]; then
  # The workflow run, not its attempt: re-running a failed job does not record the same deploy twice.
  idempotency_key="${GITHUB_RUN_ID}-${INPUT_ENVIRONMENT:-production}"
fi

record=(deploy record --version "${INPUT_VERSION:-}" --environment "${INPUT_ENVIRONMENT:-production}")
[[ -n "$commit" ]] && record+=(--commit "$commit")
[[ -n "${INPUT_URL:-}" ]] && record+=(--url "$INPUT_URL")
[[ -n "${INPUT_DESCRIPTION:-}" ]] && record+=(--description "$INPUT_DESCRIPTION")
[[ -n "$idempotency_key" ]] && record+=(--idempotency-key "$idempotency_key")
"${friction[@]}" "${record[@]}"

case "${INPUT_CHECK:-true}" in
  false) exit 0 ;;
  true) ;;
  *) echo "check must be true or false, not ${INPUT_CHECK}" >&2; exit 2 ;;
esac
exec "${friction[@]}" deploy check --version "${INPUT_VERSION:-}" --environment "${INPUT_ENVIRONMENT:-production}" \
  --timeout "${INPUT_TIMEOUT:-2h}" --interval "${INPUT_INTERVAL:-30s}" --fail-on "${INPUT_FAIL_ON:-fail}"
