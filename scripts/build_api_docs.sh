#!/usr/bin/env bash
# Build the API reference from the docstrings with pdoc into build/api/ (or the folder given as
# $1). Warnings are errors, except pdoc's "Error parsing type annotation": it evaluates string
# annotations at runtime and cannot resolve recursive aliases (JsonValue) used from another
# module; those annotations are still shown, as written. CI runs this script.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-${ROOT}/build/api}"
cd "${ROOT}"
python -W error -W "ignore:Error parsing type annotation:UserWarning" -m pdoc \
  rxacp rxacp.client rxacp.agent rxacp.agent.support rxacp.session rxacp.transport \
  rxacp.roles rxacp.roles.builders rxacp.roles.twins \
  rxacp.schema rxacp.testing rxacp.errors rxacp.capabilities rxacp.jsonrpc \
  --docformat restructuredtext -o "${OUT}"
echo "API reference: ${OUT}/index.html"
