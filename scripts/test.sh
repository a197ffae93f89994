#!/usr/bin/env bash
# Installs everything the tests need (Python packages, Debian Chromium for the browser tests;
# npm packages are installed by the tests that build Docusaurus) and runs the whole suite.
# Says what it is doing before each phase and how long each took; arguments go to pytest, e.g.
#   scripts/test.sh -m "not slow and not npm and not browser"   # the quick loop
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
phase_started=$SECONDS
phase() {  # phase "what starts now": ends the previous phase with its time
  local now=$SECONDS
  if [ -n "${current:-}" ]; then
    echo "scripts/test.sh: ${current} took $((now - phase_started)) s" >&2
  fi
  current="$1"
  phase_started=$now
  [ -n "$current" ] && echo "scripts/test.sh: ${current}..." >&2
  return 0
}
finish() {
  local code=$?
  phase ""
  echo "scripts/test.sh: total $((SECONDS - started)) s (exit ${code})" >&2
}
trap finish EXIT
phase "setting up .venv (scripts/setup.sh test)"
scripts/setup.sh test
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  phase "installing Debian Chromium for the browser tests"
  (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || echo "Chromium could not be installed; browser tests will be skipped." >&2
fi
phase "ruff check"
.venv/bin/ruff check .
if command -v npm >/dev/null 2>&1; then
  phase "site plugin unit tests (npm ci, node --test)"
  (cd site-plugin && npm ci --no-audit --no-fund --loglevel=error && npm test)
fi
phase "pytest ${*:-(the whole suite)}"
.venv/bin/python -m pytest "$@"
