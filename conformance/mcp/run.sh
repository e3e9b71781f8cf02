#!/usr/bin/env bash
# The official MCP TypeScript SDK (@modelcontextprotocol/sdk) against sandbox4j-mcp.jar over stdio:
# builds the jar (package only: nothing goes into ~/.m2), installs the SDK into conformance/.scratch/mcp,
# and runs check.mjs: list, call, schema refusals, cancellation, then raw bad frames (-32700, -32600,
# -32602, each followed by a served frame) and stdin EOF during a call (the process must end).
# Env: MCP_SDK_VERSION pins the SDK version (default: the version checked here).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
conformance_init mcp

echo "== building the server jar"
(cd "$root" && ./mvnw -B -q ${CONFORMANCE_MVN_FLAGS:-} -pl sandbox4j-mcp -am -DskipTests package >"$scratch/build.log" 2>&1) \
  || { cat "$scratch/build.log" >&2; exit 1; }

echo "== installing the SDK"
conformance_npm_install @modelcontextprotocol/sdk "${MCP_SDK_VERSION:-1.32.2}"
echo "@modelcontextprotocol/sdk $(node -p "require('$scratch/node_modules/@modelcontextprotocol/sdk/package.json').version")"

MCP_SDK_DIR="$scratch" MCP_JAR="$root/sandbox4j-mcp/target/sandbox4j-mcp.jar" node "$here/check.mjs"
