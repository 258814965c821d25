#!/usr/bin/env bash
# Create .venv-interop-py1/ (repo root) with the OFFICIAL Python ACP SDK's 1.0 release candidate
# (acp.experimental.v2, acp.http, acp.contrib), isolated from rxacp's own environment and from the
# stable 0.12.1 peer in .venv-interop-py/. Idempotent: does nothing if the venv already has the
# pinned version. Used by the interop tests for ACP v2 and the remote transport.
set -euo pipefail

ACP_PY_SDK_VERSION="1.0.0rc3"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ROOT}/.venv-interop-py1"
PY="${PYTHON:-python3}"

if [ -x "${VENV}/bin/python" ] && "${VENV}/bin/python" - <<PYEOF 2>/dev/null
import importlib.metadata as m, sys
import uvicorn  # serves the SDK's ASGI app in the remote-transport interop tests
sys.exit(0 if m.version("agent-client-protocol") == "${ACP_PY_SDK_VERSION}" else 1)
PYEOF
then
  echo "interop venv ready: ${VENV}"
  exit 0
fi

UVICORN="uvicorn==0.54.0"  # an ASGI server for the SDK's create_asgi_app (it ships none)
rm -rf "${VENV}"
"${PY}" -m venv "${VENV}"
# the release candidate's HTTP server and client need its "http" extra where it declares one
"${VENV}/bin/python" -m pip install --quiet --disable-pip-version-check \
  "agent-client-protocol[http]==${ACP_PY_SDK_VERSION}" "${UVICORN}" \
  || "${VENV}/bin/python" -m pip install --quiet --disable-pip-version-check \
  "agent-client-protocol==${ACP_PY_SDK_VERSION}" "${UVICORN}"
"${VENV}/bin/python" -c "import acp; print('interop venv ready:', acp.__file__)"
