#!/usr/bin/env bash
# Makes sure the toolchain the test suite needs beyond npm is present: the Python client test
# (test/polyglot) runs examples/python with /usr/bin/python3 (grpc, protobuf, cryptography) and
# generates its stubs with protoc and the gRPC Python plugin; the inbox's browser test
# (test/inbox/inbox-browser.test.ts) drives Debian's Chromium through playwright-core.
#
#   bash scripts/provision-test-toolchain.sh     (npm test runs it first)
#
# Present already: says so and exits 0 at once (a Python import and two lookups, no apt).
# Missing, as root (or with password-less sudo): installs the Debian packages with apt-get.
# Missing otherwise: names the packages and the command that installs them, and exits 1.
set -euo pipefail

PACKAGES=(python3-grpcio python3-protobuf python3-cryptography protobuf-compiler protobuf-compiler-grpc chromium)
PYTHON=/usr/bin/python3
PLUGIN=/usr/bin/grpc_python_plugin
CHROMIUM=/usr/bin/chromium

missing() {
  local what=()
  if [ ! -x "$PYTHON" ]; then
    what+=("$PYTHON")
  elif ! "$PYTHON" -c 'import grpc, google.protobuf, cryptography' >/dev/null 2>&1; then
    what+=("grpc/protobuf/cryptography for $PYTHON")
  fi
  command -v protoc >/dev/null 2>&1 || what+=(protoc)
  [ -x "$PLUGIN" ] || what+=("$PLUGIN")
  [ -x "$CHROMIUM" ] || what+=("$CHROMIUM")
  if [ "${#what[@]}" -gt 0 ]; then
    local IFS=,
    echo "${what[*]}"
  fi
}

need=$(missing)
if [ -z "$need" ]; then
  echo "test toolchain: present (python3 grpc/protobuf/cryptography, protoc, grpc_python_plugin, chromium)"
  exit 0
fi

install_command="apt-get update && apt-get install -y ${PACKAGES[*]}"
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo=(sudo -n)
else
  {
    echo "test toolchain: missing ${need//,/, }."
    echo "The Python client test (test/polyglot) and the inbox's browser test need the Debian packages: ${PACKAGES[*]}."
    echo "Install them as root, then run npm test again:"
    echo "  $install_command"
  } >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "test toolchain: missing ${need//,/, }, and there is no apt-get here: install the equivalents of ${PACKAGES[*]}" >&2
  exit 1
fi

echo "test toolchain: missing ${need//,/, }: installing ${PACKAGES[*]} (apt-get)"
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${PACKAGES[@]}" >/dev/null

need=$(missing)
if [ -n "$need" ]; then
  echo "test toolchain: still missing ${need//,/, } after installing ${PACKAGES[*]}" >&2
  exit 1
fi
echo "test toolchain: installed"
