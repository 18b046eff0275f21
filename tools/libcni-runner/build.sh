#!/usr/bin/env bash
# Builds libcni-runner offline against Debian's libcni source (golang-github-appc-cni-dev), in GOPATH mode.
# Usage: build.sh <output-path>
set -euo pipefail
out=${1:?usage: build.sh <output-path>}
out=$(realpath -m "$out")
cd "$(dirname "$0")"
export GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= CGO_ENABLED=0
export GOCACHE=${GOCACHE:-${TMPDIR:-/tmp}/vck-gocache}
go build -o "$out" .
