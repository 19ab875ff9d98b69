# Sourced by scripts/setup.sh. Reads dpkg's status of a package, as `dpkg-query -W -f='${Status}'`
# prints it: "<wanted> <flag> <state>", such as "install ok installed" or "hold ok installed".

# Whether STATUS is an install that did not finish (an interrupted install may have unpacked its
# files, and the next apt run would configure it and start its system service) of a package never
# configured before: CONFIGURED, dpkg's Config-Version (the version last configured), is empty.
# Only the last word of STATUS, the package's state, says how far dpkg got: "hold" (apt-mark hold)
# or "deinstall" is what the administrator wants next. A package configured before and left
# unfinished since (an `apt upgrade` cut short: triggers pending, half-configured) is the machine's
# own server, not an install of setup's: setup would install it again and stop its service.
status_half_installed() {
  case "${1##* }" in
    installed | not-installed | config-files | '') return 1 ;;
  esac
  [ -z "${2:-}" ]
}

# Whether any of LINES (one per package: its status, three words, then its Config-Version if it has
# one, as dpkg_half_installed lists them) is an install that did not finish (status_half_installed)
# and none is installed or was configured before: with one that is, the machine has a server of its
# own (an `apt upgrade` cut short may have pulled in a new major version, never configured), and
# setup, which installs only where there is none, did not start these.
any_status_half_installed() {
  local wanted flag state configured half=1
  while read -r wanted flag state configured; do
    if [ "$state" = installed ] || [ -n "$configured" ]; then return 1; fi
    if status_half_installed "$wanted $flag $state" "$configured"; then half=0; fi
  done <<<"$1"
  return "$half"
}

# Whether dpkg knows a package but has not finished installing it (status_half_installed); with
# a pattern (dpkg-query's) and a regular expression of names, any package both match. One dpkg
# does not know (installed another way, no dpkg) is not.
dpkg_half_installed() {
  command -v dpkg-query >/dev/null 2>&1 || return 1
  local listed; listed="$(dpkg-query -W -f='${Package} ${Status} ${Config-Version}\n' "$1" 2>/dev/null)" || return 1
  any_status_half_installed "$(awk -v names="${2:-^$1\$}" '$1 ~ names { sub(/^[^ ]+ /, ""); print }' <<<"$listed")"
}
