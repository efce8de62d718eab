#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the GPU tests of a kit built by bench/gpu/build-kit.sh, with the kit's own Java runtime.
# Usage: run-kit.sh [REPORTS]   (REPORTS: a folder for JUnit's XML reports; default: none)
# NCCL is found as the nccl backend finds it (docs/nccl.md, "Finding NCCL"); where
# PYTORCH_LIBRARY_PATH is unset and a python3 with PyTorch is on PATH, it is set to that PyTorch's
# lib folder, so its pip NCCL wheel is found (place 3 of the order).
set -uo pipefail
KIT="$(cd "$(dirname "$0")" && pwd)"
command -v nvidia-smi >/dev/null && nvidia-smi -L
if [ -z "${PYTORCH_LIBRARY_PATH:-}" ] && command -v python3 >/dev/null; then
  TORCH_LIB=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null) \
    && export PYTORCH_LIBRARY_PATH="$TORCH_LIB" && echo "PYTORCH_LIBRARY_PATH=$TORCH_LIB"
fi
CP="$KIT/classes/test"
for jar in "$KIT"/lib/*.jar; do
  case "$jar" in *junit-platform-console-standalone*) ;; *) CP="$CP:$jar" ;; esac
done
ARGS=(execute --class-path "$CP" --scan-class-path "$KIT/classes/test" --include-tag gpu
      --details tree --disable-banner)
[ -n "${1:-}" ] && ARGS+=(--reports-dir "$1")
exec "$KIT/jre/bin/java" -Dorg.slf4j.simpleLogger.defaultLogLevel=info \
  -jar "$KIT"/lib/junit-platform-console-standalone-*.jar "${ARGS[@]}"
