# Sourced by scripts/setup.sh, after its `say`. A step of minutes whose tool prints nothing (apt
# kept quiet, Go's module download and build) would leave a first run looking stuck.

# Runs "$@", saying every HEARTBEAT_SECONDS (default 30) that LABEL is still under way; returns
# its status. The beat stops with the step, and with this shell if it is killed.
with_heartbeat() {
  local label="$1"
  shift
  local every="${HEARTBEAT_SECONDS:-30}" started=$SECONDS status=0
  (while sleep "$every" && kill -0 $$ 2>/dev/null; do say "still ${label} ($((SECONDS - started)) s)"; done) &
  local beat=$!
  "$@" || status=$?
  kill "$beat" 2>/dev/null || true
  wait "$beat" 2>/dev/null || true
  return "$status"
}
