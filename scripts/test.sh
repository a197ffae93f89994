#!/usr/bin/env bash
# Installs everything the tests need (Python packages, Debian Chromium for the browser tests;
# npm packages are installed by the tests that build Docusaurus) and runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "Installing Debian Chromium for the browser tests..." >&2
  (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || echo "Chromium could not be installed; browser tests will be skipped." >&2
fi
.venv/bin/ruff check .
if command -v npm >/dev/null 2>&1; then
  echo "Site plugin unit tests (node --test)..." >&2
  (cd site-plugin && npm ci --no-audit --no-fund --loglevel=error && npm test)
fi
exec .venv/bin/python -m pytest "$@"
