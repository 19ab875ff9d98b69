# Sourced by scripts/setup.sh, after its `say`. A step of minutes whose tool prints nothing (apt
# kept quiet, Go's module download and build) would leave a first run looking stuck.

# Runs "$@", saying every HEARTBEAT_SECONDS (default 30) that LABEL is still under way; returns
# its status. The beat stops with the step, and with this shell if it is killed.
with_heartbeat() {
  local label="$1"
  shift
  local every="${HEARTBEAT_SECONDS:-30}" started=$SECONDS status=0
  # Its sleep is waited for, not run in the foreground: the subshell then takes the TERM below at
  # once and ends the sleep too, which would otherwise hold the shell's stderr open for an interval.
  (
    sleeper=''
    trap '[ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null; exit 0' TERM
    while :; do
      sleep "$every" &
      sleeper=$!
      wait "$sleeper" || exit 0
      kill -0 $$ 2>/dev/null || exit 0
      say "still ${label} ($((SECONDS - started)) s)"
    done
  ) &
  local beat=$!
  "$@" || status=$?
  kill "$beat" 2>/dev/null || true
  wait "$beat" 2>/dev/null || true
  return "$status"
}
