#!/usr/bin/env bash
# Runs the browser tests (web/test/*.test.mjs) with node's test runner against headless Debian
# Chromium. Builds web/dist (scripts/build-web) and the native CLI (preset "native", the greedy
# reference) first unless OXIDIZE_WEB_SKIP_BUILD=1. Artifacts (demo.png, browser console log) go to
# build/web-artifacts/ or $OXIDIZE_WEB_ARTIFACTS. Extra arguments go to `node --test`.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ ! -d web/node_modules/playwright-core ] || [ ! -d web/node_modules/typescript ] || [ ! -d web/node_modules/vite ]; then
  (cd web && npm install --no-audit --no-fund --loglevel=error)
fi
if [ "${OXIDIZE_WEB_SKIP_BUILD:-0}" != 1 ]; then
  scripts/build-web
  if [ -z "${OXIDIZE_CLI:-}" ]; then
    [ -f build/native/build.ninja ] || cmake --preset native >/dev/null
    cmake --build build/native -j "${JOBS:-2}" --target oxidize
  fi
fi
cd web
exec node --test --test-concurrency=1 "$@" test/*.test.mjs
