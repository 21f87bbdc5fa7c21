#!/usr/bin/env bash
# Installs what the device build and the emulation tests need, from Debian's packages,
# when it is missing. Idempotent and quiet when everything is present.
#
# usage: xtensa/bootstrap.sh COMMAND=PACKAGE ...
#   Each argument names a command (a name on PATH, a path that must exist, or dpkg:PACKAGE
#   for a package that must be installed) and the Debian package that provides it. A
#   package of another architecture (NAME:i386) adds that architecture to dpkg first. The Makefile passes the list, so tool names live in one place.
set -euo pipefail

present() {
    case "$1" in
        dpkg:*) dpkg -s "${1#dpkg:}" >/dev/null 2>&1 ;;
        */*) [ -e "$1" ] ;;
        *) command -v "$1" >/dev/null 2>&1 ;;
    esac
}

missing=()
for pair in "$@"; do
    cmd=${pair%%=*}
    pkg=${pair#*=}
    if ! present "$cmd"; then
        missing+=("$pkg")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

# De-duplicate, keep order.
pkgs=$(printf '%s\n' "${missing[@]}" | awk '!seen[$0]++' | tr '\n' ' ')
echo "bootstrap: installing Debian packages: $pkgs" >&2
if [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null 2>&1; then
    echo "bootstrap: cannot install ($pkgs): not root and no sudo. Install them, or point" >&2
    echo "bootstrap: the Makefile variables (XTENSA_RUSTC, LLVM_MC, ...) at your own tools." >&2
    exit 1
fi
sudo_=""
[ "$(id -u)" -ne 0 ] && sudo_=sudo
export DEBIAN_FRONTEND=noninteractive
for arch in $(printf '%s\n' "${missing[@]}" | sed -n 's/^[^:]*:\([a-z0-9]*\)$/\1/p' | sort -u); do
    if [ "$arch" != "$(dpkg --print-architecture)" ] && ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
        $sudo_ dpkg --add-architecture "$arch"
    fi
done
if ! { $sudo_ apt-get update -qq && $sudo_ apt-get install -y -qq --no-install-recommends $pkgs; } >/tmp/neuron-translate-bootstrap.log 2>&1; then
    echo "bootstrap: apt-get failed installing: $pkgs" >&2
    tail -n 20 /tmp/neuron-translate-bootstrap.log >&2
    exit 1
fi
for pair in "$@"; do
    cmd=${pair%%=*}
    if ! present "$cmd"; then
        echo "bootstrap: '$cmd' is still missing after installing ${pair#*=}" >&2
        exit 1
    fi
done
