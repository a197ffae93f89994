#!/usr/bin/env bash
# The main job on the embedded defaults (no keys, no servers): index the sample textbook into
# local Qdrant with local embeddings, then ask it questions with cited answers.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/textbook-chat demo "$@"
