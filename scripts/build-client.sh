#!/usr/bin/env bash
# `npm run build:client`: the client package's JavaScript and type declarations (tsc) into
# client/dist, whole or not at all. Built beside it and moved into place only when tsc succeeds:
# a build cut short (Ctrl-C) or failing on a type error leaves the previous client/dist as it was,
# never a newer half that setup.sh's freshness check would take for a finished build. The folder
# is the first argument (tests build a copy); client/ by default.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
client="${1:-$root/client}"
# The Node the project pins (npm puts it first on PATH; run directly, the machine's may be older
# than one that runs TypeScript).
node_bin="$root/node_modules/.bin/node"
[ -x "$node_bin" ] || node_bin=node
rm -rf "$client/dist.next"
if ! "$node_bin" "$root/node_modules/typescript/bin/tsc" -p "$client" --outDir "$client/dist.next" ||
  ! "$node_bin" "$root/client/scripts/rewrite-declaration-imports.ts" "$client/dist.next"; then
  rm -rf "$client/dist.next"
  echo "build-client: the build failed; $client/dist is left as it was" >&2
  exit 1
fi
# Two renames: client/dist is missing only between them, not for a whole rm -rf.
rm -rf "$client/dist.old"
if [ -d "$client/dist" ]; then mv "$client/dist" "$client/dist.old"; fi
mv "$client/dist.next" "$client/dist"
rm -rf "$client/dist.old"
