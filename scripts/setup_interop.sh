#!/usr/bin/env bash
# Create .venv-interop-py/ (repo root) with the OFFICIAL Python ACP SDK, isolated from rxacp's own
# environment so its pydantic/schema never mix with ours. Idempotent: does nothing if the venv
# already has the pinned version. Used by tests/interop (the fixture runs it when needed).
set -euo pipefail

# the stable peer by default; scripts/setup_interop_py1.sh sets these for the 1.0 candidate
ACP_PY_SDK_VERSION="${ACP_PY_SDK_VERSION:-0.12.1}"   # verified to install on Python 3.11
ACP_PY_SDK_EXTRA="${ACP_PY_SDK_EXTRA:-}"             # e.g. "[http]"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ROOT}/${ACP_PY_SDK_VENV:-.venv-interop-py}"
ACP_PY_SDK_ALSO="${ACP_PY_SDK_ALSO:-}"                # more pinned requirements, "name==version ..."
PY="${PYTHON:-python3}"

if [ -x "${VENV}/bin/python" ] && "${VENV}/bin/python" - <<PYEOF 2>/dev/null
import importlib.metadata as m, sys
pins = [("agent-client-protocol", "${ACP_PY_SDK_VERSION}")]
pins += [tuple(p.split("==")) for p in "${ACP_PY_SDK_ALSO}".split()]
sys.exit(0 if all(m.version(name) == version for name, version in pins) else 1)
PYEOF
then
  echo "interop venv ready: ${VENV}"
  exit 0
fi

rm -rf "${VENV}"
"${PY}" -m venv "${VENV}"
"${VENV}/bin/python" -m pip install --quiet --disable-pip-version-check \
  "agent-client-protocol${ACP_PY_SDK_EXTRA}==${ACP_PY_SDK_VERSION}" ${ACP_PY_SDK_ALSO}
"${VENV}/bin/python" -c "import acp; print('interop venv ready:', acp.__file__)"
