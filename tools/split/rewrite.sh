#!/usr/bin/env bash
# Step (b) of the split (issue 32): rewrite every reference to a type or package listed in
# tools/split/moves.tsv, over the whole tree. Idempotent; names only, no behaviour.
# Rerun it after merging a branch that still uses the old names:  tools/split/rewrite.sh
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
exec python3 tools/split/rewrite.py "$@"
