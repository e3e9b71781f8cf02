# Shared steps of the conformance runs, sourced by conformance/<provider>/run.sh (bash, set -euo pipefail).
# After `conformance_init <provider>`: $here (the provider's folder), $root (the repository),
# $scratch (conformance/.scratch/<provider>, never committed).

# Sets the paths and checks that node and npm are present.
conformance_init() {
  conformance_provider="$1"
  here="$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)"
  root="$(cd "$here/../.." && pwd)"
  scratch="$root/conformance/.scratch/$conformance_provider"
  mkdir -p "$scratch"
  command -v node >/dev/null || { echo "conformance/$conformance_provider: node is required" >&2; exit 2; }
  command -v npm >/dev/null || { echo "conformance/$conformance_provider: npm is required" >&2; exit 2; }
}

# Builds the emulator (package only: nothing goes into ~/.m2 but downloads) and sets $cp to its
# classpath, test scope included (slf4j-simple, for the log). CONFORMANCE_MVN_FLAGS=-o builds offline
# once the plugins are cached. `conformance_build <module>` builds another emulator module
# (default sandbox-emulators).
conformance_build() {
  local module="${1:-sandbox-emulators}"
  (cd "$root" && ./mvnw -B -q ${CONFORMANCE_MVN_FLAGS:-} -pl "$module" -am -DskipTests package \
      org.apache.maven.plugins:maven-dependency-plugin:3.9.0:build-classpath \
      -Dmdep.includeScope=test -Dmdep.outputFile="$scratch/classpath.txt" >"$scratch/build.log" 2>&1) \
    || { cat "$scratch/build.log" >&2; exit 1; }
  cp="$root/$module/target/classes:${EXTRA_CLASSPATH:+$EXTRA_CLASSPATH:}$(cat "$scratch/classpath.txt")"
}

# Installs npm packages at pinned versions into $scratch, unless they are there already:
# conformance_npm_install <package> <version> [<package> <version> ...].
conformance_npm_install() {
  local specs=() missing=0 pkg version
  while [ $# -gt 0 ]; do
    pkg="$1" version="$2"
    shift 2
    specs+=("$pkg@$version")
    if [ ! -f "$scratch/node_modules/$pkg/package.json" ] \
       || ! grep -q "\"version\": \"$version\"" "$scratch/node_modules/$pkg/package.json"; then
      missing=1
    fi
  done
  if [ "$missing" = 1 ]; then
    (cd "$scratch" && { [ -f package.json ] || echo '{"private":true,"type":"module"}' > package.json; } \
       && npm install --no-audit --no-fund --silent "${specs[@]}")
  fi
}

# Starts an emulator on a free port with its output in $emulator_log, waits (up to 30 s) for the line
# that carries its URL, sets $url, and stops it on exit:
# conformance_start <sed expression printing the URL> <main class> [args ...].
conformance_start() {
  local url_expr="$1"
  shift
  emulator_log="$scratch/emulator.log"
  java -cp "$cp" "$@" >"$emulator_log" 2>&1 &
  emulator_pid=$!
  trap conformance_stop EXIT
  url=""
  for _ in $(seq 1 300); do
    url="$(sed -n "$url_expr" "$emulator_log" 2>/dev/null | head -n 1 || true)"
    [ -n "$url" ] && return 0
    kill -0 "$emulator_pid" 2>/dev/null \
      || { cat "$emulator_log" >&2; echo "conformance/$conformance_provider: the emulator exited" >&2; exit 1; }
    sleep 0.1
  done
  cat "$emulator_log" >&2
  echo "conformance/$conformance_provider: the emulator did not print its URL" >&2
  exit 1
}

# Stops the emulator (SIGTERM, so it destroys its sandboxes and reports) and waits for it. Idempotent.
conformance_stop() {
  if [ -n "${emulator_pid:-}" ] && kill -0 "$emulator_pid" 2>/dev/null; then
    kill "$emulator_pid" 2>/dev/null || true
  fi
  if [ -n "${emulator_pid:-}" ]; then
    wait "$emulator_pid" 2>/dev/null || true
  fi
}
