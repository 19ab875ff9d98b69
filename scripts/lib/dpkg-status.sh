# Sourced by scripts/setup.sh. Reads dpkg's status of a package, as `dpkg-query -W -f='${Status}'`
# prints it: "<wanted> <flag> <state>", such as "install ok installed" or "hold ok installed".

# Whether STATUS is an install that did not finish (an interrupted install may have unpacked its
# files, and the next apt run would configure it and start its system service). Only the last
# word, the package's state, says so: "hold" (apt-mark hold) or "deinstall" is what the
# administrator wants next, not how far dpkg got.
status_half_installed() {
  case "${1##* }" in
    installed | not-installed | config-files | '') return 1 ;;
    *) return 0 ;;
  esac
}

# Whether any of STATUSES (one per line, as `dpkg-query -W -f='${Status}\n' 'postgresql*'` prints
# the packages a pattern matches) is an install that did not finish.
any_status_half_installed() {
  local line
  while IFS= read -r line; do
    if status_half_installed "$line"; then return 0; fi
  done <<<"$1"
  return 1
}

# Whether dpkg knows a package but has not finished installing it (status_half_installed); with
# a pattern (dpkg-query's) and a regular expression of names, any package both match. One dpkg
# does not know (installed another way, no dpkg) is not.
dpkg_half_installed() {
  command -v dpkg-query >/dev/null 2>&1 || return 1
  local listed; listed="$(dpkg-query -W -f='${Package} ${Status}\n' "$1" 2>/dev/null)" || return 1
  any_status_half_installed "$(awk -v names="${2:-^$1\$}" '$1 ~ names { sub(/^[^ ]+ /, ""); print }' <<<"$listed")"
}
