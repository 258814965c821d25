#!/usr/bin/env bash
# Create .venv-interop-py/ (repo root) with the OFFICIAL Python ACP SDK, isolated from rxacp's own
# environment so its pydantic/schema never mix with ours. Idempotent: does nothing if the venv
# already has the pinned version. Used by tests/interop (the fixture runs it when needed).
set -euo pipefail

ACP_PY_SDK_VERSION="0.12.1"   # verified to install on Python 3.11
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ROOT}/.venv-interop-py"
PY="${PYTHON:-python3}"

if [ -x "${VENV}/bin/python" ] && "${VENV}/bin/python" - <<PYEOF 2>/dev/null
import importlib.metadata as m, sys
sys.exit(0 if m.version("agent-client-protocol") == "${ACP_PY_SDK_VERSION}" else 1)
PYEOF
then
  echo "interop venv ready: ${VENV}"
  exit 0
fi

rm -rf "${VENV}"
"${PY}" -m venv "${VENV}"
"${VENV}/bin/python" -m pip install --quiet --disable-pip-version-check \
  "agent-client-protocol==${ACP_PY_SDK_VERSION}"
"${VENV}/bin/python" -c "import acp; print('interop venv ready:', acp.__file__)"
