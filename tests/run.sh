#!/usr/bin/env bash
# README's test command: sets up what the tests need on a fresh Debian machine (Chromium and
# chromedriver, jq, qpdf and poppler for the invoices' PDFs, axe-core from npm, and from PyPI
# bePaid's client library, localstripe, aiosmtpd, the Factur-X library and schemathesis, each
# into a folder of the repository), then runs every test on
# SQLite and PostgreSQL and fuzzes the API against its OpenAPI document. PostgreSQL itself is
# the machine's: PAYDESK_TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres).
# A tool that cannot be installed, or a PostgreSQL that cannot be reached, stops it with one
# line saying so, before any test runs.
set -euo pipefail
cd "$(dirname "$0")/.."

export PAYDESK_TEST_POSTGRES_URL="${PAYDESK_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

fail() {
  echo "tests/run.sh: $*" >&2
  exit 1
}

echo "== Debian packages: chromium and chromium-driver (browser tests), jq and curl (the docs' examples), qpdf and poppler-utils (invoices' PDFs)"
missing=()
for tool in chromium:chromium chromedriver:chromium-driver jq:jq curl:curl psql:postgresql-client python3:python3 npm:npm \
  qpdf:qpdf pdftotext:poppler-utils; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    fail "install these Debian packages first (as root): apt-get install ${missing[*]}"
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || fail "apt-get update failed: the package registry is unreachable"
  apt-get install -y -qq "${missing[@]}" >/dev/null || fail "apt-get install ${missing[*]} failed"
fi
chromium --version
chromedriver --version

echo "== npm: axe-core in .ci/axe (the browser tests run it inside every page)"
npm ci --prefix .ci/axe --no-audit --no-fund --loglevel=error || fail "npm ci in .ci/axe failed: is the npm registry reachable?"
test -f .ci/axe/node_modules/axe-core/axe.min.js || fail "axe-core did not install into .ci/axe"

echo "== PyPI: bePaid's client library, localstripe, aiosmtpd, factur-x and schemathesis in .ci/venv"
if [ ! -x .ci/venv/bin/python ]; then
  python3 -m venv .ci/venv || fail "python3 -m venv failed: install python3-venv"
fi
.ci/venv/bin/pip install --quiet --disable-pip-version-check bepaid==0.8.0 localstripe==1.15.10 aiosmtpd==1.4.6 schemathesis==4.32.5 \
  factur-x==7.8 \
  || fail "pip install into .ci/venv failed: is PyPI reachable?"
.ci/venv/bin/python -c "import bepaid.client, aiosmtpd, facturx" || fail "the PyPI tools did not install into .ci/venv"
test -x .ci/venv/bin/localstripe || fail "localstripe did not install into .ci/venv"

echo "== PostgreSQL at $PAYDESK_TEST_POSTGRES_URL"
psql "$PAYDESK_TEST_POSTGRES_URL" -qAtc 'select 1' >/dev/null 2>&1 \
  || fail "PostgreSQL is unreachable at $PAYDESK_TEST_POSTGRES_URL: start it, or set PAYDESK_TEST_POSTGRES_URL"

# Most tests wait on the network, not a core: six run at once (browsers two at a time).
echo "== cargo test --workspace"
cargo test --workspace -- --test-threads=6

echo "== schemathesis against the served OpenAPI document, on SQLite and PostgreSQL"
bash .ci/schemathesis.sh
