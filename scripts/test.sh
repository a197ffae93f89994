#!/usr/bin/env bash
# Installs everything the tests need (Python packages, Debian Chromium for the browser tests;
# npm packages are installed by the tests that build Docusaurus) and runs the whole suite.
# Says what it is doing before each phase and how long each took; arguments go to pytest.
#   scripts/test.sh            # everything (what CI runs)
#   scripts/test.sh --quick    # the quick loop: the tests not marked slow, npm or browser, and
#                              #   the site plugin's node tests without reinstalling its packages
#   scripts/test.sh --quick tests/functions -x   # further arguments still go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."
quick=""
if [ "${1:-}" = "--quick" ]; then
  quick=1
  shift
  set -- -m "not slow and not npm and not browser" "$@"
fi
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
if [ -z "$quick" ] && [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  phase "installing Debian Chromium for the browser tests"
  (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || echo "Chromium could not be installed; browser tests will be skipped." >&2
fi
phase "ruff check"
.venv/bin/ruff check .
if command -v npm >/dev/null 2>&1; then
  if [ -n "$quick" ] && [ -d site-plugin/node_modules ]; then
    phase "site plugin unit tests (node --test; its packages as installed)"
    (cd site-plugin && npm test)
  else
    phase "site plugin unit tests (npm ci, node --test)"
    (cd site-plugin && npm ci --no-audit --no-fund --loglevel=error && npm test)
  fi
fi
# One pytest worker per core and one more (pytest-xdist; tests/workers.py keeps a file's tests
# together and the Docusaurus site's tests on one worker, which mostly waits on Chromium and the
# page's own timers: the extra worker uses that time). TEXTBOOK_CHAT_TEST_WORKERS=1 runs in one
# process; a -n of your own (after the script's name) wins too.
cores="$(nproc 2>/dev/null || echo 1)"
if [ "$cores" -gt 1 ] 2>/dev/null; then cores=$((cores + 1)); fi
workers="${TEXTBOOK_CHAT_TEST_WORKERS:-$cores}"
parallel=()
if [ "$workers" -gt 1 ] 2>/dev/null; then
  parallel=(-n "$workers")
fi
phase "pytest ${*:-(the whole suite)} on ${workers} worker(s)"
# --cpu-durations: the tests that cost the most CPU, a figure the machine's load does not grow
.venv/bin/python -m pytest --cpu-durations=25 "${parallel[@]}" "$@"
