#!/usr/bin/env bash
# Fuzzes the API with schemathesis (PyPI, in .ci/venv) against the served OpenAPI document:
# every default check, all phases (examples, coverage, fuzzing, stateful via the document's
# links), on a fresh SQLite database and a fresh PostgreSQL schema. Settings and the checks
# left out (each with its reason) are in .ci/schemathesis/schemathesis.toml.
set -euo pipefail
cd "$(dirname "$0")/.."

PG="${PAYDESK_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
export PGOPTIONS="--client-min-messages=warning"
BIN=target/debug/paydesk
# The binary as the integration tests build it (their dependencies' features): right after
# `cargo test` this builds nothing, where `cargo build --bin paydesk` rebuilt the dependencies
# whose features the tests' own add to (3.6 minutes of CI).
cargo test --quiet --test it --no-run
WORK=$(mktemp -d)
SERVER=""
cleanup() {
  if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; fi
  if [ -n "${SCHEMA:-}" ]; then psql "$PG" -qAtc "DROP SCHEMA IF EXISTS $SCHEMA CASCADE" >/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

run() {
  local name=$1 database=$2
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  export DATABASE_URL=$database PAYDESK_KEY_ENCRYPTION_KEY="cGF5ZGVzay1zY2hlbWF0aGVzaXMta2V5LWVuY3J5cHQ="
  local shop
  shop=$("$BIN" shop create --name "Schemathesis")
  # Scheduler off: the fuzzer's own requests are what runs. Live products payable through
  # the simulated acquirer: otherwise every live pay page is 503 on a machine without a real
  # acquirer. The auth throttle raised: schemathesis sends wrong and missing credentials to
  # every operation on purpose (ignored_auth, missing_required_header), which would lock
  # this address out after 30 and turn the rest of the run into 429s. Private addresses
  # allowed: a URL the schema accepts (http://10.0.0.1/) is not refused for its address in
  # the middle of a fuzz run (that refusal is tested in tests/it/webhooks.rs).
  PAYDESK_LISTEN="127.0.0.1:$port" PAYDESK_SCHEDULER=off PAYDESK_SIMULATED_LIVE=on \
    PAYDESK_API_AUTH_FAILURES=1000000 PAYDESK_WEBHOOKS_ALLOW_PRIVATE=on RUST_LOG=warn \
    "$BIN" serve >"$WORK/$name.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 100); do
    curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && break
    sleep 0.1
  done
  export PAYDESK_ST_URL="http://127.0.0.1:$port"
  PAYDESK_ST_SHOP=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["shop_id"])' "$shop")
  PAYDESK_ST_SECRET=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["secret_key"])' "$shop")
  export PAYDESK_ST_SHOP PAYDESK_ST_SECRET
  echo "-- schemathesis on $name"
  local status=0
  (cd .ci/schemathesis && ../venv/bin/schemathesis run "$PAYDESK_ST_URL/openapi.json") || status=$?
  kill "$SERVER" && wait "$SERVER" 2>/dev/null || true
  SERVER=""
  if [ "$status" -ne 0 ]; then
    echo "schemathesis failed on $name; the server's log:" >&2
    tail -50 "$WORK/$name.log" >&2
    return "$status"
  fi
}

run sqlite "sqlite://$WORK/paydesk.db?mode=rwc"
SCHEMA="paydesk_st_$(date +%s)_$$"
psql "$PG" -qAtc "CREATE SCHEMA $SCHEMA" >/dev/null
SEP='?'; case "$PG" in *\?*) SEP='&';; esac
run postgres "${PG}${SEP}options=-c%20search_path%3D${SCHEMA}"
