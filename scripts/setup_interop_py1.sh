#!/usr/bin/env bash
# Create .venv-interop-py1/ (repo root) with the OFFICIAL Python ACP SDK's 1.0 release candidate
# and its "http" extra (acp.experimental.v2, acp.http, acp.contrib), isolated from rxacp's own
# environment and from the stable peer in .venv-interop-py/: scripts/setup_interop.sh with this
# version, extra and folder, plus uvicorn (an ASGI server for the SDK's create_asgi_app, which
# ships none). Used by the interop tests for ACP v2 and the remote transport.
set -euo pipefail
ACP_PY_SDK_VERSION="1.0.0rc3" ACP_PY_SDK_EXTRA="[http]" ACP_PY_SDK_VENV=".venv-interop-py1" \
  ACP_PY_SDK_ALSO="uvicorn==0.54.0" \
  exec bash "$(dirname "${BASH_SOURCE[0]}")/setup_interop.sh"
