#!/usr/bin/env bash
# Builds the sandbox4j CLI and runs three short demos on the local bubblewrap runner, or on the
# Docker runner where bubblewrap is unavailable (macOS, Windows in WSL2 or Git Bash, Linux without
# apt-get) and a Docker engine answers (Docker Desktop, Colima, Podman). Needs a JDK 17+. On Linux
# it installs bubblewrap with apt-get if it is missing (through sudo unless run as root); with
# Docker it pulls the runner's image once if it is missing (the runner itself never pulls).
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

provider=local
if ! command -v bwrap >/dev/null 2>&1 && { [ "$(uname -s)" != Linux ] || ! command -v apt-get >/dev/null 2>&1; }; then
  if command -v docker >/dev/null 2>&1 && docker version >/dev/null 2>&1; then
    provider=docker
  elif [ "$(uname -s)" = Linux ]; then
    echo "demo.sh: bubblewrap (bwrap) is missing and apt-get is not available: install bubblewrap with your package manager, or start a Docker engine" >&2
    exit 1
  else
    echo "demo.sh: bubblewrap needs Linux; here the demos run in Docker: start Docker Desktop, Colima or Podman (its docker command on PATH) and run demo.sh again" >&2
    exit 1
  fi
fi
if [ "$provider" = docker ]; then
  image="${SANDBOX4J_DOCKER_IMAGE:-nikolaik/python-nodejs:python3.12-nodejs22-slim}"
  if ! docker image inspect "$image" >/dev/null 2>&1; then
    echo "demo.sh: bubblewrap is unavailable, so the demos run in Docker; pulling the runner's image once: docker pull $image"
    docker pull "$image"
  fi
  export SANDBOX4J_DOCKER_IMAGE="$image"
  echo "demo.sh: bubblewrap is unavailable here: the demos run on the Docker runner (image $image)"
elif ! command -v bwrap >/dev/null 2>&1; then
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
  printf '$ java -jar %s --provider %s' "$jar" "$provider"
  local a
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./=:,-]+$ ]]; then
      printf ' %s' "$a"
    else
      printf " '%s'" "${a//\'/\'\\\'\'}"
    fi
  done
  echo
  java -jar "$jar" --provider "$provider" "$@"
}

demo "1. Hello world (Python, deny-all egress by default)" \
  --code 'import platform; print("hello from", platform.system(), "in a sandbox")'

demo "2. A network connection under deny-all: it fails inside the sandbox, the CLI still exits 0" \
  --code 'import socket; socket.create_connection(("1.1.1.1", 443), timeout=5); print("connected?!")'

demo "3. An endless loop with a 2 second budget, as JSON: status TIMED_OUT, exitCode null" \
  --timeout 2 --json --code 'while True: pass'
