# Sourced by scripts/setup.sh, after its `say` and `as_root`. Debian's redis-server and PostgreSQL
# packages start a system service (and enable it at boot) once apt configures them; the project
# starts servers of its own, so setup stops each one it installs. A run cut short after apt had
# configured a package, or one that left it unpacked for a later apt run (this run's other
# installs included) to configure, would leave that service running: so the intent is written
# down before the install, and carried out at the end of every run until it is done.

SERVICES_TO_STOP_DIR="${SERVICES_TO_STOP_DIR:-.tools/services-to-stop}"

# Notes that SERVICE is to be stopped once this run's installs are over (or the next run's).
will_stop_service() {
  mkdir -p "$SERVICES_TO_STOP_DIR"
  : >"$SERVICES_TO_STOP_DIR/$1"
}

# Stops a service a Debian package started, and keeps it from starting at boot.
stop_system_service() {
  as_root service "$1" stop >/dev/null 2>&1 || true
  if command -v systemctl >/dev/null 2>&1; then as_root systemctl disable "$1" >/dev/null 2>&1 || true; fi
  if command -v update-rc.d >/dev/null 2>&1; then as_root update-rc.d "$1" disable >/dev/null 2>&1 || true; fi
}

# Stops every service noted by will_stop_service, in this run or one cut short before it, and
# forgets them; with --keep-notes (a run ending early), keeps the notes for the next run.
stop_noted_services() {
  [ -d "$SERVICES_TO_STOP_DIR" ] || return 0
  local noted name
  for noted in "$SERVICES_TO_STOP_DIR"/*; do
    [ -e "$noted" ] || continue
    name="$(basename "$noted")"
    stop_system_service "$name"
    if [ "${1:-}" != --keep-notes ]; then rm -f "$noted"; fi
  done
}
