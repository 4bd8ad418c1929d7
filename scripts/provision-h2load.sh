#!/usr/bin/env bash
# Makes sure h2load (the HTTP/2 load generator `npm run bench:grpc` drives both servers with) is
# present: Debian's nghttp2-client package ships it, and nghttp beside it.
#
#   bash scripts/provision-h2load.sh     (npm run bench:grpc runs it first)
#
# Present already: says so and exits 0 at once. Missing, as root (or with password-less sudo):
# installs the package with apt-get. Missing otherwise: names the command that installs it, exits 1.
set -euo pipefail

PACKAGE=nghttp2-client

if command -v h2load >/dev/null 2>&1; then
  echo "bench toolchain: present (h2load)"
  exit 0
fi

install_command="apt-get update && apt-get install -y $PACKAGE"
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo=(sudo -n)
else
  {
    echo "bench toolchain: h2load is missing."
    echo "npm run bench:grpc needs the Debian package $PACKAGE. Install it as root, then run the bench again:"
    echo "  $install_command"
  } >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "bench toolchain: h2load is missing, and there is no apt-get here: install nghttp2's h2load" >&2
  exit 1
fi

echo "bench toolchain: h2load is missing: installing $PACKAGE (apt-get)"
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$PACKAGE" >/dev/null

if ! command -v h2load >/dev/null 2>&1; then
  echo "bench toolchain: still no h2load after installing $PACKAGE" >&2
  exit 1
fi
echo "bench toolchain: installed (h2load)"
