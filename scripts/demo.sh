#!/usr/bin/env bash
# The main job: aws-node and aws-cni on a virtual VPC (examples/aws-node, run by tools/cluster-harness's demo).
# Does its own set-up on a fresh clone (Debian packages, npm ci, build, the libcni runner), then runs the demo.
# Arguments go to the demo:
#   npm run demo -- --keep --json      leave it running and end with one JSON line (with the `down` command)
#   npm run demo -- --image            the nodes run the aws-node container image under containerd
#   npm run demo -- --ipv6             an IPv6 cluster (dual-stack VPC, /128 pods, egress-cni to IPv4)
set -euo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
if [ "$(id -u)" -ne 0 ]; then
  echo "demo: needs root (it creates network namespaces)" >&2
  exit 1
fi
bash scripts/setup.sh >&2
npx turbo run build --output-logs=errors-only >&2
bash tools/libcni-runner/build.sh tools/libcni-runner/bin/libcni-runner >&2
unset NODE_EXTRA_CA_CERTS
exec node tools/cluster-harness/dist/demo.cjs "$@"
