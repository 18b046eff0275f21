#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 clone: system packages (when root and any is missing) and npm
# dependencies (when node_modules is missing or older than package-lock.json).
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t pkgs < <(grep -vE '^\s*(#|$)' scripts/system-packages.txt)
missing=()
unpack_kubectl=false
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' && continue
  # Debian's kubectl (kubernetes-client) cannot be installed where another package (e.g. google-cloud-sdk's
  # kubectl) owns /usr/bin/kubectl: unpack it into node_modules/.cache instead (found by the test kit).
  if [ "$p" = kubernetes-client ] && dpkg -S /usr/bin/kubectl >/dev/null 2>&1; then unpack_kubectl=true; continue; fi
  missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing system packages (${missing[*]}); run as root or install them" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund
fi

kubectl_dir=node_modules/.cache/debian-kubectl
if $unpack_kubectl && [ ! -x "$kubectl_dir/usr/bin/kubectl" ]; then
  echo "setup: unpacking Debian's kubernetes-client into $kubectl_dir"
  tmp=$(mktemp -d)
  chmod 755 "$tmp"
  (cd "$tmp" && { apt-get download -qq kubernetes-client 2>/dev/null || { apt-get update -qq && apt-get download -qq kubernetes-client; }; })
  mkdir -p "$kubectl_dir"
  dpkg-deb -x "$tmp"/kubernetes-client_*.deb "$kubectl_dir"
  rm -rf "$tmp"
fi
