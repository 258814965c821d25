#!/usr/bin/env bash
# Install the pinned PRODUCTION ACP agents and clients of the field suite (tests/field) from the npm
# registry (agents, acpx) and PyPI (acp-client, last, in its own virtualenv),
# each into its own folder under the user cache ($XDG_CACHE_HOME or ~/.cache)/rxacp/field-peers
# (outside the work tree; RXACP_FIELD_CACHE overrides), with `npm install` from
# the exact versions and the lock file committed in tests/field/peers/<name>/ (not `npm ci`: npm
# writes opencode-ai's lock without its other platforms' optional packages and then refuses it
# in `npm ci`; `npm install` keeps every version the lock pins and only adds those entries).
# Idempotent: a folder whose stamp matches
# the hash of its package.json + package-lock.json is left alone, so later runs cost nothing.
# Bounded: each npm install gets RXACP_NPM_TIMEOUT seconds (default 420); the peers install in
# parallel. Exits non-zero with a clear message if node/npm is missing or too old, or an install
# fails (e.g. the npm registry is unreachable). Used by tests/field/conftest.py (session fixture).
# Prints one line per peer: "<name> <installed version>".
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PEERS="${ROOT}/tests/field/peers"
CACHE="${RXACP_FIELD_CACHE:-${XDG_CACHE_HOME:-${HOME}/.cache}/rxacp/field-peers}"
NPM_TIMEOUT="${RXACP_NPM_TIMEOUT:-420}"
MIN_NODE_MAJOR=20

fail() {
  echo "setup_field_agents: ERROR: $*" >&2
  exit 1
}

command -v node >/dev/null 2>&1 \
  || fail "node is not installed (need Node.js >= ${MIN_NODE_MAJOR}); the field tests cannot run"
command -v npm >/dev/null 2>&1 || fail "npm is not installed; the field tests cannot run"
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')" || fail "cannot run node"
[ "${NODE_MAJOR}" -ge "${MIN_NODE_MAJOR}" ] \
  || fail "node $(node --version) is too old (need >= ${MIN_NODE_MAJOR})"

mkdir -p "${CACHE}"

# name -> the package whose version is reported (the first dependency of its package.json)
main_package() {
  node -p "Object.keys(require('$1/package.json').dependencies)[0]"
}

install_one() {
  local name="$1" src="${PEERS}/$1" dir="${CACHE}/$1"
  local stamp="${dir}/node_modules/.rxacp-install-stamp"
  local want pkg
  want="$(cat "${src}/package.json" "${src}/package-lock.json" | sha256sum | cut -d' ' -f1)"
  pkg="$(main_package "${src}")"
  if [ -f "${stamp}" ] && [ "$(cat "${stamp}")" = "${want}" ] \
    && [ -f "${dir}/node_modules/${pkg}/package.json" ]; then
    return 0
  fi
  rm -rf "${dir}"
  mkdir -p "${dir}"
  cp "${src}/package.json" "${src}/package-lock.json" "${dir}/"
  set +e
  (cd "${dir}" && timeout "${NPM_TIMEOUT}" npm install --no-audit --no-fund --loglevel=error \
    >"${dir}.log" 2>&1)
  local rc=$?
  set -e
  if [ "${rc}" -eq 124 ]; then
    echo "${name}: npm install did not finish within ${NPM_TIMEOUT}s (registry $(npm config get registry))" >"${dir}.failed"
    return 1
  elif [ "${rc}" -ne 0 ]; then
    { echo "${name}: npm install failed (exit ${rc}); registry $(npm config get registry):"; tail -20 "${dir}.log"; } >"${dir}.failed"
    return 1
  fi
  [ -f "${dir}/node_modules/${pkg}/package.json" ] || {
    echo "${name}: npm install finished but ${pkg} is not installed" >"${dir}.failed"
    return 1
  }
  echo "${want}" >"${stamp}"
}

NAMES=()
for src in "${PEERS}"/*/; do
  NAMES+=("$(basename "${src}")")
done

PIDS=()
for name in "${NAMES[@]}"; do
  rm -f "${CACHE}/${name}.failed"
  install_one "${name}" &
  PIDS+=("$!")
done
FAILED=0
for i in "${!PIDS[@]}"; do
  if ! wait "${PIDS[$i]}"; then
    FAILED=1
    cat "${CACHE}/${NAMES[$i]}.failed" >&2 2>/dev/null || echo "${NAMES[$i]}: install failed" >&2
  fi
done
[ "${FAILED}" -eq 0 ] || fail "cannot install the field agents (the field suite never skips them)"

for name in "${NAMES[@]}"; do
  pkg="$(main_package "${PEERS}/${name}")"
  echo "${name} $(node -p "require('${CACHE}/${name}/node_modules/${pkg}/package.json').version")"
done

# acp-client (PyPI), a production client driving rxacp's reference agent: its own virtualenv,
# never rxacp's environment (the driver, tests/field/clients/acp_client_driver.py, runs there).
ACP_CLIENT_VERSION="0.1.0"
VENV="${CACHE}/acp-client-venv"
PY="${PYTHON:-python3}"
if ! "${VENV}/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('acp-client') != '${ACP_CLIENT_VERSION}')" 2>/dev/null; then
  rm -rf "${VENV}"
  "${PY}" -m venv "${VENV}" || fail "cannot create ${VENV} with ${PY}"
  timeout "${NPM_TIMEOUT}" "${VENV}/bin/python" -m pip install --quiet --disable-pip-version-check \
    "acp-client==${ACP_CLIENT_VERSION}" \
    || fail "pip install acp-client==${ACP_CLIENT_VERSION} failed (is PyPI reachable?)"
fi
echo "acp-client ${ACP_CLIENT_VERSION}"
