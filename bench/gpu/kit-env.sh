# SPDX-License-Identifier: Apache-2.0
# Sourced by the GPU kit's scripts: KIT, the test classpath CP (without JUnit's console launcher),
# and PYTORCH_LIBRARY_PATH from the python3 on PATH where it is unset, so the NCCL wheel PyTorch
# ships is found (docs/nccl.md, "Finding NCCL", place 3).
KIT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CP="$KIT/classes/test"
for jar in "$KIT"/lib/*.jar; do
  case "$jar" in *junit-platform-console-standalone*) ;; *) CP="$CP:$jar" ;; esac
done
if [ -z "${PYTORCH_LIBRARY_PATH:-}" ] && command -v python3 >/dev/null; then
  TORCH_LIB=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null) \
    && export PYTORCH_LIBRARY_PATH="$TORCH_LIB" && echo "PYTORCH_LIBRARY_PATH=$TORCH_LIB"
fi
command -v nvidia-smi >/dev/null && nvidia-smi -L
