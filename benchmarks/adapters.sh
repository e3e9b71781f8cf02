#!/usr/bin/env bash
# The adapter benchmark (benchmarks/README.md, "Adapters beside the official SDKs"): each Java adapter
# beside its official npm SDK against the same emulator in instant mode, then the 1 GiB output flood.
# Usage: benchmarks/adapters.sh [runs] [provider ...]     (runs: measured cycles per client at 1 concurrent, default 200)
# Needs node and the SDKs as conformance/ installs them (conformance/run.sh <provider> once).
# ADAPTERS_MVN_FLAGS (default -o) goes to Maven; FLOOD=0 skips the flood, FLOOD_ARGS="1024 e2b" picks its size and runners.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
skip_flood=false
[ "${FLOOD:-1}" = 0 ] && skip_flood=true
exec ./mvnw -B -q ${ADAPTERS_MVN_FLAGS:--o} -pl benchmarks -am verify -DskipTests -Dmaven.javadoc.skip -Dmaven.source.skip \
    -Pbench-adapters -Dbench.adapters.args="${*:-200}" -Dbench.flood.skip="$skip_flood" -Dbench.flood.args="${FLOOD_ARGS:-1024}"
