#!/usr/bin/env bash
# Install the OFFICIAL TypeScript ACP SDK peers' dependencies (tests/interop/ts) with `npm ci`
# from the committed package-lock.json. Idempotent: does nothing when node_modules matches the
# lock file (a stamp records the hash of package.json + package-lock.json of the last install).
# Bounded: npm ci gets RXACP_NPM_TIMEOUT seconds (default 300).
# Exits non-zero with a clear message if node/npm is missing or too old, or the install fails
# (e.g. the npm registry is unreachable). Used by tests/interop/test_ts_sdk.py (session fixture).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${ROOT}/tests/interop/ts"
STAMP="${DIR}/node_modules/.rxacp-install-stamp"
NPM_TIMEOUT="${RXACP_NPM_TIMEOUT:-300}"
MIN_NODE_MAJOR=18

fail() {
  echo "setup_interop_ts: ERROR: $*" >&2
  exit 1
}

command -v node >/dev/null 2>&1 \
  || fail "node is not installed (need Node.js >= ${MIN_NODE_MAJOR}); the TypeScript interop tests cannot run"
command -v npm >/dev/null 2>&1 \
  || fail "npm is not installed; the TypeScript interop tests cannot run"

NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')" \
  || fail "cannot run node"
[ "${NODE_MAJOR}" -ge "${MIN_NODE_MAJOR}" ] \
  || fail "node $(node --version) is too old (need >= ${MIN_NODE_MAJOR})"

[ -f "${DIR}/package-lock.json" ] || fail "missing ${DIR}/package-lock.json"

hash_inputs() {
  cat "${DIR}/package.json" "${DIR}/package-lock.json" | sha256sum | cut -d' ' -f1
}
WANT="$(hash_inputs)"

if [ -f "${STAMP}" ] && [ "$(cat "${STAMP}")" = "${WANT}" ] \
  && [ -f "${DIR}/node_modules/@agentclientprotocol/sdk/package.json" ]; then
  echo "TypeScript interop peers ready: ${DIR}/node_modules (node $(node --version))"
  exit 0
fi

echo "setup_interop_ts: npm ci in ${DIR} (timeout ${NPM_TIMEOUT}s)"
set +e
(cd "${DIR}" && timeout "${NPM_TIMEOUT}" npm ci --no-audit --no-fund --loglevel=error)
RC=$?
set -e
if [ "${RC}" -eq 124 ]; then
  fail "npm ci did not finish within ${NPM_TIMEOUT}s (is the npm registry reachable? $(npm config get registry))"
elif [ "${RC}" -ne 0 ]; then
  fail "npm ci failed (exit ${RC}); is the npm registry reachable ($(npm config get registry))? See npm's message above"
fi

SDK_VERSION="$(node -p "require('${DIR}/node_modules/@agentclientprotocol/sdk/package.json').version")" \
  || fail "npm ci finished but @agentclientprotocol/sdk is not installed"
echo "${WANT}" > "${STAMP}"
echo "TypeScript interop peers ready: @agentclientprotocol/sdk ${SDK_VERSION} (node $(node --version))"
