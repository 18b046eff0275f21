#!/usr/bin/env bash
# Creates the shell of a new workspace package: package.json (exports map with the in-repo source
# condition), tsconfig.json, tsup.config.ts and src/index.ts. Usage: scaffold-package.sh <name> "<description>"
set -euo pipefail
name=$1 desc=$2
dir=packages/$name
[ -e "$dir" ] && { echo "$dir exists" >&2; exit 1; }
# The repository URL is written once, in the root package.json (tools/packaging/test/manifests.test.ts).
repo_url=$(node -p "require('./package.json').repository.url")
mkdir -p "$dir/src" "$dir/test"
cat > "$dir/package.json" <<JSON
{
  "name": "@vpc-cni-kit/$name",
  "version": "0.0.0",
  "description": "$desc",
  "license": "Apache-2.0",
  "type": "module",
  "engines": { "node": ">=20.19" },
  "sideEffects": false,
  "files": ["dist", "src", "README.md", "CHANGELOG.md", "LICENSE", "NOTICE"],
  "exports": {
    ".": {
      "@vpc-cni-kit/source": "./src/index.ts",
      "import": { "types": "./dist/index.d.ts", "default": "./dist/index.js" },
      "require": { "types": "./dist/index.d.cts", "default": "./dist/index.cjs" }
    },
    "./package.json": "./package.json"
  },
  "main": "./dist/index.cjs",
  "module": "./dist/index.js",
  "types": "./dist/index.d.ts",
  "scripts": {
    "build": "tsup",
    "typecheck": "tsc -p tsconfig.json --noEmit",
    "lint": "biome check .",
    "test": "cd ../.. && vitest run $dir",
    "prepack": "node ../../scripts/prepack.mjs"
  },
  "repository": { "type": "git", "url": "$repo_url", "directory": "$dir" },
  "publishConfig": { "access": "public" }
}
JSON
cat > "$dir/tsconfig.json" <<JSON
{
  "extends": "../../tsconfig.base.json",
  "include": ["src", "test"]
}
JSON
cat > "$dir/tsup.config.ts" <<TS
import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.js';

export default defineConfig(packageBuild({ index: 'src/index.ts' }));
TS
echo "created $dir"
