#!/usr/bin/env bash
# MCP peers against a started server on its DEFAULT configuration (no MCP_ALLOWED_ORIGINS): every server
# scenario of the conformance suite (`conformance list`, under Bun; it needs Node 22 otherwise), each one
# passing or named with its reason in .ci/conformance-baseline.yml, and MCP Inspector CLI calls with the
# bearer header: tools/list, tools/call (also with a progress token: answered as an SSE stream),
# resources/list, resources/templates/list, resources/read, prompts/get, logging/setLevel, and
# completion/complete through the Inspector's mcpdo (its CLI has no one-shot method for it; mcpdo keeps
# a connection in a private daemon, stopped at the end). Each check writes a one-case JUnit report into
# OUT (first argument, or a temporary folder), which .ci/junit-summary.ts sums with the test runs.
# Standalone: bash .ci/mcp-peers.sh   (prints its own "N passed, N failed" line; exit 1 on any failure)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=${1:-$(mktemp -d)}
mkdir -p "$OUT"
PORT=${MCP_PEERS_PORT:-4123}
PROXY_PORT=${MCP_PEERS_PROXY_PORT:-4124}
WORK=$(mktemp -d)
LOG="$WORK/server.log"
status=0
server_pid=""
proxy_pid=""

MCPDO="node $ROOT/node_modules/@modelcontextprotocol/inspector/clients/mcpdo/build/mcp-bin.js"
# mcpdo's daemon and catalog stay inside WORK (removed at the end), never in the user's home.
export MCP_INSPECTOR_DAEMON_DIR="$WORK/mcpdo" MCP_CATALOG_PATH="$WORK/inspector-catalog.json"
MCP_INSPECTOR_DAEMON_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
export MCP_INSPECTOR_DAEMON_TOKEN

cleanup() {
  [ -d "$WORK/mcpdo" ] && timeout 20 $MCPDO daemon stop >/dev/null 2>&1
  [ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# shellcheck source=junit-case.sh
. "$ROOT/.ci/junit-case.sh"

# record NAME PASSED(0|1) DETAILS_FILE: one JUnit report per check.
record() {
  local name=$1 failed=$2 details=$3
  junit_case "$OUT/mcp-peers-$name.xml" mcp-peers "$name" "$failed" "$details"
  if [ "$failed" = 0 ]; then echo "  pass  $name"; else echo "  FAIL  $name"; tail -n 30 "$details" | sed 's/^/        /'; status=1; fi
}

# check NAME CMD...: runs CMD, records pass/fail from its exit code (and an optional grep in $EXPECT).
check() {
  local name=$1; shift
  local out="$WORK/$name.out" failed=0
  "$@" >"$out" 2>&1 || failed=1
  if [ "$failed" = 0 ] && [ -n "${EXPECT:-}" ] && ! grep -q -- "$EXPECT" "$out"; then
    echo "expected output to contain: $EXPECT" >>"$out"
    failed=1
  fi
  record "$name" "$failed" "$out"
}

echo "=== mcp peers: server on 127.0.0.1:$PORT"
env -u MCP_ALLOWED_ORIGINS DATA_DIR="$WORK/data" HOST=127.0.0.1 PORT=$PORT LOG_LEVEL=warn \
  bun run start >"$LOG" 2>&1 &
server_pid=$!
token=""
for _ in $(seq 1 300); do
  if grep -q "listening on" "$LOG" 2>/dev/null && [ -s "$WORK/data/first-run-token" ]; then
    token=$(tr -d '[:space:]' <"$WORK/data/first-run-token")
    break
  fi
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$token" ]; then
  record server-start 1 "$LOG"
  echo "$(( 0 )) passed, 1 failed"
  exit 1
fi
record server-start 0 "$LOG"

# The conformance client sends no Authorization header: the CI-only proxy adds the token (see its header).
TARGET="http://127.0.0.1:$PORT" LISTEN_PORT=$PROXY_PORT MCP_TEST_TOKEN=$token \
  bun "$ROOT/.ci/auth-proxy.ts" >"$WORK/proxy.log" 2>&1 &
proxy_pid=$!
for _ in $(seq 1 100); do grep -q "auth-proxy:" "$WORK/proxy.log" 2>/dev/null && break; sleep 0.1; done

CONFORMANCE="$ROOT/node_modules/.bin/conformance"
scenarios=$(bun --bun "$CONFORMANCE" list 2>/dev/null | awk '/^Server scenarios/ {on=1; next} /^$/ {on=0} on && /^ *- / {print $2}')
if [ -z "$scenarios" ]; then
  echo "conformance list printed no server scenario" >"$WORK/list.out"
  record conformance-list 1 "$WORK/list.out"
fi
# A scenario in the baseline is expected to fail (the tool fails the run if it passes: stale baseline).
for scenario in $scenarios; do
  check "conformance-$scenario" bun --bun "$CONFORMANCE" server \
    --url "http://127.0.0.1:$PROXY_PORT/mcp" --scenario "$scenario" \
    --expected-failures "$ROOT/.ci/conformance-baseline.yml" -o "$WORK/conformance-$scenario"
done

INSPECTOR="$ROOT/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
inspector() {
  node "$INSPECTOR" --cli "http://127.0.0.1:$PORT/mcp" \
    --transport http --header "Authorization: Bearer $token" "$@"
}
EXPECT='"find_documents"' check inspector-tools-list inspector --method tools/list
EXPECT='Welcome' check inspector-tools-call inspector --method tools/call --tool-name find_documents
EXPECT='collab://documents/welcome' check inspector-resources-list inspector --method resources/list
EXPECT='collab://documents/{slug}/sections/{section_id}' check inspector-resources-templates-list \
  inspector --method resources/templates/list
# The welcome document's slug has a random suffix: its URI as resources/list gave it.
welcome_uri=$(grep -o 'collab://documents/welcome[^"]*' "$WORK/inspector-resources-list.out" | head -n 1)
EXPECT='# Welcome' check inspector-resources-read inspector --method resources/read --uri "${welcome_uri:-missing}"
EXPECT='"type": "resource"' check inspector-prompts-get inspector --method prompts/get \
  --prompt-name summarise_document --prompt-args "slug=${welcome_uri##*/}"
# A progress token turns the answer into an SSE stream (progress, then the answer): the same text arrives.
EXPECT='# Welcome' check inspector-tools-call-progress inspector --method tools/call --tool-name read_document \
  --tool-arg "slug=${welcome_uri##*/}" --tool-metadata progressToken=ci-progress
EXPECT='{}' check inspector-logging-set-level inspector --method logging/setLevel --log-level info
# completion/complete: the Inspector CLI has no one-shot method for it; its mcpdo has (over a connection).
mkdir -p "$WORK/mcpdo" && chmod 700 "$WORK/mcpdo"
EXPECT='Connection' check inspector-mcpdo-connect timeout 60 $MCPDO connect "http://127.0.0.1:$PORT/mcp" \
  --transport http --header "Authorization: Bearer $token"
EXPECT='"welcome-' check inspector-completion-complete timeout 60 $MCPDO --format json \
  --connection "http://127.0.0.1:$PORT/mcp" prompts/complete --complete-ref-type ref/resource \
  --complete-ref 'collab://documents/{slug}' --complete-arg-name slug --complete-arg-value wel
timeout 20 $MCPDO daemon stop >/dev/null 2>&1

kill "$proxy_pid" 2>/dev/null
proxy_pid=""
kill -TERM "$server_pid" 2>/dev/null
stopped=1
for _ in $(seq 1 300); do kill -0 "$server_pid" 2>/dev/null || { stopped=0; break; }; sleep 0.1; done
wait "$server_pid" 2>/dev/null
code=$?
[ "$stopped" = 0 ] && [ "$code" = 0 ] || { echo "server exit code $code (stopped: $stopped)" >>"$LOG"; stopped=1; }
record server-sigterm "$stopped" "$LOG"
server_pid=""

if [ -z "${1:-}" ]; then
  bun "$ROOT/.ci/junit-summary.ts" "$OUT"/mcp-peers-*.xml
fi
exit $status
