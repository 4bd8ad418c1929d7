#!/usr/bin/env bash
# Generates Charter's Python stubs (messages and gRPC clients) from proto/charter/v1 into OUT_DIR.
#
#   examples/python/generate.sh OUT_DIR
#
# Needs protoc and the gRPC Python plugin; on Debian: apt-get install -y protobuf-compiler
# protobuf-compiler-grpc (the plugin is /usr/bin/grpc_python_plugin). Override with the PROTOC and
# GRPC_PYTHON_PLUGIN environment variables. The stubs import each other as `charter.v1.*`, so put
# OUT_DIR on sys.path (charter_example.py --stubs OUT_DIR does). Generated code is not committed.
set -euo pipefail

if [ "$#" -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
out=$1
root="$(cd "$(dirname "$0")/../.." && pwd)"
protoc=${PROTOC:-protoc}
plugin=${GRPC_PYTHON_PLUGIN:-/usr/bin/grpc_python_plugin}

if ! command -v "$protoc" >/dev/null 2>&1; then
  echo "generate.sh: $protoc not found: install protoc (Debian: apt-get install -y protobuf-compiler)" >&2
  exit 1
fi
if [ ! -x "$plugin" ]; then
  echo "generate.sh: gRPC Python plugin $plugin not found: install it (Debian: apt-get install -y protobuf-compiler-grpc)" >&2
  exit 1
fi

mkdir -p "$out"
"$protoc" -I "$root/proto" \
  --python_out="$out" --grpc_python_out="$out" \
  --plugin=protoc-gen-grpc_python="$plugin" \
  "$root"/proto/charter/v1/*.proto

# Regular packages rather than namespace packages, so that `charter.v1` resolves to these stubs
# even when another `charter` directory is on sys.path.
touch "$out/charter/__init__.py" "$out/charter/v1/__init__.py"
echo "generated Python stubs for charter.v1 in $out"
