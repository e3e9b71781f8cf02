#!/usr/bin/env bash
# Every figure of issue 35's table in one run, one benchmark after the other on the same machine and
# build (benchmarks/README.md, "All of issue 35's figures side by side"). Each benchmark's whole output goes to
# benchmarks/target/side-by-side/<name>.log; their summary lines are gathered in summary.txt.
#
# Usage: benchmarks/side-by-side.sh [quick]
#   quick   small sizes, to check that everything runs (minutes); the figures are then not comparable
#   LONG=1  adds the adapters after a 10,000-cycle warm-up (about 10 more minutes)
# Needs what each benchmark needs: node and the SDKs where conformance/run.sh <provider> installs them
# (a provider without its SDK is reported as not measured), a Docker engine and the test image for the
# Docker rows (skipped with a line saying so otherwise), root for chrt and the kernel limits.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out=benchmarks/target/side-by-side
mkdir -p "$out"
summary="$out/summary.txt"
: >"$summary"

quick=false
[ "${1:-}" = quick ] && quick=true
if $quick; then
  adapter_runs=20; warm_short=20; warm_long=40; local_rounds=5; docker_rounds=3; pool_runs=3; flood_mib=64
else
  # AdapterBench's --warmup N is N/20 warm-up rounds, each 20 cycles one at a time and 128 at 16 concurrent:
  # 40 is 296 cycles per client (the issue's "300-cycle warm-up"), 400 is 2,960 ("after 3,000 cycles"),
  # 1360 is 10,064; then 3 measured rounds (60 cycles one at a time, 384 at 16)
  adapter_runs=60; warm_short=40; warm_long=400; local_rounds=20; docker_rounds=15; pool_runs=20; flood_mib=1024
fi

note() { echo "$*" | tee -a "$summary"; }
rt=""
[ "$(id -u)" -eq 0 ] && command -v chrt >/dev/null 2>&1 && rt="chrt -f 10"

note "side by side: $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(git rev-parse --short HEAD)$($quick && echo ', quick sizes')"
./mvnw -B -q ${SIDE_MVN_FLAGS:--o} -pl benchmarks,sandbox-cli -am package -DskipTests -Dmaven.javadoc.skip -Dmaven.source.skip \
    org.apache.maven.plugins:maven-dependency-plugin:3.9.0:build-classpath \
    -Dmdep.outputFile="$root/$out/cp.txt" -Dmdep.includeScope=runtime >"$out/build.log" 2>&1 \
  || { echo "build failed: $out/build.log"; tail -20 "$out/build.log"; exit 1; }
CP="benchmarks/target/classes:$(cat "$out/cp.txt")"

# one benchmark: its log, then the lines matching a pattern into the summary
bench() {
  local name="$1" pattern="$2"; shift 2
  note ""
  note "== $name: $*"
  local start=$(date +%s)
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  grep -E "$pattern" "$out/$name.log" | tee -a "$summary"
  note "($name: exit $rc, $(( $(date +%s) - start )) s, load after $(cut -d' ' -f1 /proc/loadavg))"
}

# 1. client CPU per cycle and cycles/s, Java against each official SDK, after a short and a long warm-up
adapter_rows='^(provider|[a-z0-9]+ +(Java/SDK|SDK|Java)|  [a-z0-9]+: not measured)'
bench adapters-warmup-$warm_short "$adapter_rows" \
    java -cp "$CP" dev.sandbox4j.benchmarks.adapters.AdapterBench $adapter_runs --warmup $warm_short e2b vercel daytona modal
bench adapters-warmup-$warm_long "$adapter_rows" \
    java -cp "$CP" dev.sandbox4j.benchmarks.adapters.AdapterBench $adapter_runs --warmup $warm_long e2b vercel daytona modal
if [ "${LONG:-0}" = 1 ]; then
  bench adapters-warmup-1360 "$adapter_rows" \
      java -cp "$CP" dev.sandbox4j.benchmarks.adapters.AdapterBench $adapter_runs --warmup 1360 e2b vercel daytona modal
fi

# 2. the local runner over bare python3 (real-time priority as root, as in "Local runner latency")
bench local-latency '^(case|bare|runner|sandbox|run,|exec,|added)' $rt java -cp "$CP" dev.sandbox4j.benchmarks.LocalLatency $local_rounds

# 3. Docker run() over docker run --rm
if docker version >/dev/null 2>&1; then
  bench docker-run-rm 'docker run --rm' env SANDBOX4J_DOCKER_IMAGE="${SANDBOX4J_DOCKER_IMAGE:-sandbox4j-test:bookworm-1}" \
      java -cp "benchmarks/target/classes:sandbox-cli/target/sandbox4j-cli.jar" dev.sandbox4j.benchmarks.DockerRunRmLatency $docker_rounds
else
  note ""; note "== docker-run-rm: not measured (no Docker engine answers; .ci/run starts one)"
fi

# 4. warm pool against cold, time to first result: the local runner and the emulators
bench pool-latency 'open -> first result' java -cp "$CP" dev.sandbox4j.benchmarks.PoolLatency $pool_runs 200

# 5. bytes read past a 64 MiB cap under a 1 GiB flood (and at 256 KiB), every runner
flood_runners="local e2b vercel daytona modal"
docker version >/dev/null 2>&1 && flood_runners="$flood_runners docker"
bench flood '^(runner|local|e2b|vercel|daytona|modal|docker) ' \
    java -cp "$CP" dev.sandbox4j.benchmarks.adapters.FloodBench $flood_mib $flood_runners

# 6. cold start of the CLI and the MCP server, plain and with the AppCDS archives
bench coldstart '^(case|cli|mcp|load)' python3 benchmarks/coldstart.py $($quick && echo 3 || echo 9)

note ""
note "side by side: done $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg); logs in $out"
