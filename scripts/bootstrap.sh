#!/usr/bin/env bash
# The README's quick start, on a fresh Debian 12 machine:
#
#   bash scripts/bootstrap.sh run    install the build packages, configure with the
#                                    default CMake preset, build, run `polyattn run`
#                                    on the default backend (extra arguments go to it)
#   bash scripts/bootstrap.sh test   the same setup, then every test suite; exits
#                                    non-zero if any fails
#
# Idempotent: apt-get runs only when a package is missing, and a configured build
# directory is reused. Uses sudo for apt-get when not run as root.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# libc6-dev: gcc only recommends it, and the install skips recommends.
PACKAGES=(cmake gcc libc6-dev make libcriterion-dev pkg-config)

log() { echo "bootstrap: $*" >&2; }

usage() {
  sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

missing_packages() {
  local p
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

install_packages() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    log "not a Debian system: skipping apt-get; needed: ${PACKAGES[*]} (or your distribution's names)"
    return
  fi
  local missing
  missing=$(missing_packages)
  if [ -z "$missing" ]; then
    log "packages present: ${PACKAGES[*]}"
    return
  fi
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { log "missing packages ($missing) and no sudo: install them as root"; exit 1; }
    sudo=(sudo)
  fi
  log "installing:" $missing
  "${sudo[@]}" apt-get update -q
  # shellcheck disable=SC2086 # one word per package
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
}

build() {
  cd "$ROOT"
  log "configuring (cmake --preset default) and building"
  cmake --preset default
  cmake --build --preset default --parallel "$(nproc 2>/dev/null || echo 2)"
}

main() {
  local cmd="${1:-}"
  case "$cmd" in
    run)
      shift
      install_packages
      build
      log "running build/bin/polyattn run $*"
      "$ROOT/build/bin/polyattn" run "$@"
      ;;
    test)
      shift
      install_packages
      build
      log "running the test suites (ctest --preset default)"
      ctest --preset default "$@"
      ;;
    -h | --help | help)
      usage
      ;;
    *)
      usage >&2
      exit 2
      ;;
  esac
}

main "$@"
