#!/usr/bin/env bash
# Installs what the product and its tests need, only what is missing; a second run does nothing
# and takes about a second. Used by `npm start` and `npm test` (prestart/pretest) and by CI.
set -euo pipefail
cd "$(dirname "$0")/.."

usage='usage: scripts/setup.sh [--product]
  Installs what is missing: npm packages, redis-server, PostgreSQL and Chromium (apt) and the
  client package'"'"'s JavaScript (client/dist), and, unless --product is given (what `npm start`
  runs), what only the tests need: FerretDB (built with Go), openssl and python3-venv. Running it again does
  nothing.'
# Checked before anything is installed: a typo of --product would otherwise run the whole install.
case "$#:${1:-}" in
  0: | 1:--product) ;;
  1:-h | 1:--help) echo "$usage"; exit 0 ;;
  *) printf 'setup.sh: unexpected arguments: %s\n%s\n' "$*" "$usage" >&2; exit 2 ;;
esac

FERRETDB_VERSION="v1.24.2"
FERRETDB_MODULE="github.com/FerretDB/FerretDB"

say() { printf '[setup] %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
# shellcheck source=lib/heartbeat.sh
source scripts/lib/heartbeat.sh
# Installs Debian packages. dpkg --configure -a first: a run cut off during an install leaves dpkg
# "interrupted", and every later apt-get would refuse until it is finished.
apt_install() {
  as_root dpkg --configure -a
  as_root apt-get update -qq
  # Through env: sudo's env_reset would drop a variable set before it, and tzdata (PostgreSQL's)
  # would ask its questions.
  with_heartbeat "installing $*" as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
# shellcheck source=lib/dpkg-status.sh
source scripts/lib/dpkg-status.sh
# shellcheck source=lib/system-services.sh
source scripts/lib/system-services.sh
# A run that ends early (a failure, Ctrl-C) stops the noted services too, but keeps the notes: a
# package it left unpacked is configured, and its service started, by a later apt run.
work=''
on_exit() {
  stop_noted_services --keep-notes
  if [ -n "$work" ]; then rm -rf "$work"; fi
}
trap on_exit EXIT

# 1. npm packages (includes the pinned Node 24 runtime in node_modules/.bin).
if [ ! -x node_modules/.bin/node ] || [ ! -f node_modules/.package-lock.json ] \
  || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm packages"
  # Not `npm ci`: registries that serve only the Linux builds of optional native packages
  # (msgpackr-extract) leave the others out of the lock, and `npm ci` then refuses the lock as out
  # of sync. `npm install` installs the same locked versions and tolerates that.
  with_heartbeat "installing npm packages" npm install --no-audit --no-fund --loglevel=error
fi

# 2. redis-server from Debian. Also when an install was cut short (unpacked, not configured): the
#    next apt run would configure it and start the system instance, and nothing would stop it.
if ! command -v redis-server >/dev/null 2>&1 || dpkg_half_installed redis-server; then
  say "installing redis-server (apt)"
  # Debian's package starts a system instance on 6379 (and at every boot); the project starts its
  # own. Noted before the install, stopped at the end of this run or, if it is cut short, the next.
  will_stop_service redis-server
  apt_install redis-server
  stop_system_service redis-server
fi
# The servers the project starts (scripts/lib/local-servers.ts) use Redis 7 settings (listpacks):
# an older redis-server on PATH would stop `npm start` and the tests with "Bad directive".
redis_major="$(redis-server --version | sed -n 's/.* v=\([0-9]*\)\..*/\1/p')"
if [ "${redis_major:-0}" -lt 7 ]; then
  say "redis-server $(command -v redis-server) is version ${redis_major:-unknown}; the project's own servers need 7.0 or newer"
  exit 1
fi

# openssl makes the certificate of the tests' TLS-only Redis Cluster (usually present already, with
# ca-certificates). Not needed by the product.
if [ "${1:-}" != "--product" ] && ! command -v openssl >/dev/null 2>&1; then
  say "installing openssl (apt)"
  apt_install openssl
fi

# python3 with venv makes the reliability suite's schemathesis environment
# (scripts/setup-schemathesis.sh); Debian ships venv's ensurepip apart, in python3-venv, and a
# minimal image may lack python3 itself. Not needed by the product.
if [ "${1:-}" != "--product" ] && ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  say "installing python3 with venv (apt)"
  apt_install python3 python3-venv
fi

# 3. FerretDB (MongoDB wire protocol over PostgreSQL), built from source with Go: the MongoDB
#    adapter's test server. The product itself does not need it (`npm start` runs PostgreSQL), so
#    `setup.sh --product` (npm's prestart) skips it.
WITH_FERRETDB=1
[ "${1:-}" = "--product" ] && WITH_FERRETDB=0
ferretdb_bin() {
  if [ -n "${FERRETDB_BIN:-}" ]; then echo "$FERRETDB_BIN"; return; fi
  echo "$(go env GOPATH)/bin/ferretdb"
}
ferretdb_ok() {
  local bin; bin="$(ferretdb_bin)"
  [ -x "$bin" ] || return 1
  # Capture first: `... | grep -q` under pipefail can fail by SIGPIPE and trigger a needless rebuild.
  local out; out="$("$bin" --version 2>&1)" || return 1
  [[ "$out" == *"version: ${FERRETDB_VERSION}"* ]]
}
if [ "$WITH_FERRETDB" = 1 ] && ! ferretdb_ok; then
  # A binary of the user's own is theirs: checked, never built over.
  if [ -n "${FERRETDB_BIN:-}" ]; then
    say "FERRETDB_BIN=$FERRETDB_BIN is not FerretDB ${FERRETDB_VERSION} (the tests' server): unset it to have it built, or point it at ${FERRETDB_VERSION}"
    exit 1
  fi
  command -v go >/dev/null 2>&1 || { say "Go 1.21 or newer is required to build FerretDB (https://go.dev/dl/; Debian 12's golang is 1.19)"; exit 1; }
  # FerretDB's go.mod names a toolchain (go 1.24): Go 1.21 and newer fetch it through the module
  # proxy; older ones fail with "unknown directive: toolchain", naming no version.
  go_version="$(go env GOVERSION)"
  go_minor="$(sed -nE 's/^go1\.([0-9]+).*/\1/p' <<<"$go_version")"
  if [ -z "$go_minor" ] || [ "$go_minor" -lt 21 ]; then
    say "Go 1.21 or newer is required to build FerretDB; $(command -v go) is ${go_version} (https://go.dev/dl/)"
    exit 1
  fi
  # Below 1.24 only by fetching go1.24 itself, which GOTOOLCHAIN=local forbids (some builds of Go
  # set it in their go.env).
  if [ "$go_minor" -lt 24 ] && [ "$(go env GOTOOLCHAIN)" = local ]; then
    say "FerretDB needs Go 1.24; $(command -v go) is ${go_version} with GOTOOLCHAIN=local: install Go 1.24 or newer, or run with GOTOOLCHAIN=auto"
    exit 1
  fi
  say "building FerretDB ${FERRETDB_VERSION} (first run only, a few minutes)"
  # Not `go install ...@version`: the module as published lacks build/version/version.txt, so the
  # binary `go install` makes panics at start-up, and some proxies refuse its version-list lookup.
  # Instead: download that exact version, copy it, write the version file, build with its go.sum.
  # A folder of this run's own, removed however the run ends (a failed build, Ctrl-C).
  work="$(mktemp -d "${TMPDIR:-/tmp}/ferretdb-build-XXXXXX")"
  mkdir -p "$work/dl"
  (cd "$work/dl" && go mod init ferretdb-download >/dev/null 2>&1 \
    && with_heartbeat "downloading FerretDB's modules" go mod download "${FERRETDB_MODULE}@${FERRETDB_VERSION}")
  src="$(go env GOMODCACHE)/github.com/!ferret!d!b/!ferret!d!b@${FERRETDB_VERSION}"
  cp -r "$src" "$work/src" && chmod -R u+w "$work/src"
  echo "${FERRETDB_VERSION}" >"$work/src/build/version/version.txt"
  out="$(ferretdb_bin)"
  mkdir -p "$(dirname "$out")"
  (cd "$work/src" && with_heartbeat "building FerretDB" go build -trimpath -o "$out" ./cmd/ferretdb)
  rm -rf "$work"
  ferretdb_ok || { say "FerretDB build did not produce ${FERRETDB_VERSION} at $(ferretdb_bin)"; exit 1; }
fi

# 4. chromium from Debian, for the queue dashboard's browser test (driven by playwright-core with
#    executablePath; `npx playwright install` is not used: it downloads browsers from the internet).
if [ ! -x /usr/bin/chromium ] || dpkg_half_installed chromium; then
  say "installing chromium (apt)"
  apt_install chromium
fi

# 5. PostgreSQL server from Debian: FerretDB's storage everywhere the project starts servers
#    (`npm start`, the tests, the benches; scripts/lib/local-servers.ts startPostgres runs a cluster
#    of the project's own under its data directory or a temp dir).
# The server is in postgresql-<major>, which a cut-short install may leave unpacked before the
# `postgresql` package that depends on it.
if ! compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null \
  || dpkg_half_installed 'postgresql*' '^postgresql(-[0-9]+)?$'; then
  say "installing postgresql (apt)"
  # Debian's package starts a cluster on 5432 (and at every boot); the project starts its own.
  will_stop_service postgresql
  apt_install postgresql
  stop_system_service postgresql
fi
# After every apt run of this setup (one configures what an earlier run left unpacked); done, the
# notes go.
stop_noted_services

# 6. The client package's JavaScript (client/dist, built by tsc): the demo page loads it as ES
#    modules from the tray service. Rebuilt when a source or a build script is newer than the
#    build, whole or not at all (scripts/build-client.sh), so a build cut short is never taken for
#    a finished one.
if [ ! -f client/dist/stream/index.js ] \
  || [ -n "$(find client/src client/scripts client/tsconfig.json scripts/build-client.sh -newer client/dist/stream/index.js -print -quit)" ]; then
  say "building the client package (client/dist)"
  bash scripts/build-client.sh
fi
