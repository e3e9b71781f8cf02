#!/usr/bin/env bash
# Builds the sandbox4j CLI and runs three short demos on the local bubblewrap runner.
# Needs Linux and a JDK 17+. Installs bubblewrap with apt-get if it is missing (through sudo
# unless run as root).
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v java >/dev/null 2>&1; then
  echo "demo.sh: no 'java' on PATH: install a JDK 17 or newer first" >&2
  exit 1
fi
java_version=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
if [ "${java_version%%.*}" -lt 17 ] 2>/dev/null; then
  echo "demo.sh: java $java_version found; sandbox4j needs 17 or newer" >&2
  exit 1
fi

if ! command -v bwrap >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "demo.sh: bubblewrap (bwrap) is missing and apt-get is not available: install bubblewrap with your package manager" >&2
    exit 1
  fi
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
    echo "demo.sh: bubblewrap is missing; installing it with 'sudo apt-get install bubblewrap' (sudo may ask for your password)"
  else
    echo "demo.sh: bubblewrap is missing; installing it with apt-get"
  fi
  $sudo apt-get update -q
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap
fi

echo "demo.sh: building sandbox-cli/target/sandbox4j-cli.jar (tests skipped; the first build downloads Maven and dependencies)"
./mvnw -B -q -DskipTests -pl sandbox-cli -am package

jar=sandbox-cli/target/sandbox4j-cli.jar
demo() {
  local title=$1
  shift
  echo
  echo "== $title"
  printf '$ java -jar %s' "$jar"
  local a
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./=:,-]+$ ]]; then
      printf ' %s' "$a"
    else
      printf " '%s'" "${a//\'/\'\\\'\'}"
    fi
  done
  echo
  java -jar "$jar" "$@"
}

demo "1. Hello world (Python, deny-all egress by default)" \
  --code 'import platform; print("hello from", platform.system(), "in a sandbox")'

demo "2. A network connection under deny-all: it fails inside the sandbox, the CLI still exits 0" \
  --code 'import socket; socket.create_connection(("1.1.1.1", 443), timeout=5); print("connected?!")'

demo "3. An endless loop with a 2 second budget, as JSON: status TIMED_OUT, exitCode null" \
  --timeout 2 --json --code 'while True: pass'
