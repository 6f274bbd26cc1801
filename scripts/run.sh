#!/usr/bin/env bash
# README command 1: set up, build, and run the main job (`rooftune run`) with its defaults.
# Extra arguments go to `rooftune run` (e.g. --quick).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec ./build/cli/rooftune run "$@"
