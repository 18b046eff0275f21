#!/usr/bin/env bash
# The one command that proves the repository: set-up, build, typecheck, lint, dependency check, API docs,
# then every test (unit and privileged). Privileged tests need root; without it they skip with a reason.
set -euo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true

bash scripts/setup.sh
node scripts/complete-lockfile.mjs --check
npx turbo run build typecheck --output-logs=errors-only
npx biome check .
node scripts/check-deps.mjs
npx typedoc --logLevel Warn
npx vitest run
