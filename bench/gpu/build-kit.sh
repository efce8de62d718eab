#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the GPU kit: a self-contained folder that runs this project's GPU tests (JUnit tag "gpu")
# on a machine with a GPU, NCCL and no JDK (the lent GPU machines here): a jlink runtime, JNA, the
# project's jars and test classes, JUnit's console launcher; no DJL natives. About 50 MB.
#
#   bench/gpu/build-kit.sh [OUT]          # default OUT: target/gpu-kit (ignored by git)
#   OUT/run-kit.sh [REPORTS]              # on the GPU machine; REPORTS: a folder for the XML reports
#   OUT/allreduce_bench.sh [REPEAT]       # on the GPU machine: world-size-1 all-reduce against PyTorch
#
# With the device tool: run(command="target/gpu-kit/run-kit.sh $OUT", carry=["target/gpu-kit"]).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${1:-$ROOT/target/gpu-kit}"
JUNIT_PLATFORM=1.14.4   # the platform of the JUnit 5.14.4 the build uses
MODULES=java.base,java.logging,java.management,java.naming,java.xml,jdk.unsupported

cd "$ROOT"
mvn -B -ntp -q -DskipTests install -pl nccl -am
rm -rf "$OUT"
mkdir -p "$OUT/lib" "$OUT/classes"
# the nccl module's runtime and test dependencies, without JUnit (the console launcher bundles it)
# and without DJL's PyTorch natives (the GPU machine has its own libtorch)
mvn -B -ntp -q -pl nccl dependency:copy-dependencies -DincludeScope=test \
  -DexcludeGroupIds=org.junit.jupiter,org.junit.platform,org.opentest4j,org.apiguardian \
  -DexcludeArtifactIds=pytorch-native-cpu,pytorch-jni -DoutputDirectory="$OUT/lib"
cp nccl/target/djl-distributed-nccl-*.jar "$OUT/lib/" 2>/dev/null || true
rm -f "$OUT"/lib/*-sources.jar "$OUT"/lib/*-javadoc.jar
cp -r nccl/target/test-classes "$OUT/classes/test"
mvn -B -ntp -q dependency:copy \
  -Dartifact="org.junit.platform:junit-platform-console-standalone:$JUNIT_PLATFORM" \
  -DoutputDirectory="$OUT/lib"
jlink --add-modules "$MODULES" --strip-debug --no-header-files --no-man-pages --compress=2 \
  --output "$OUT/jre"
cp bench/gpu/run-kit.sh bench/gpu/kit-env.sh bench/gpu/allreduce_bench.sh bench/gpu/torch_allreduce.py "$OUT/"
chmod +x "$OUT/run-kit.sh" "$OUT/allreduce_bench.sh"
echo "GPU kit in $OUT: $(du -sh "$OUT" | cut -f1)"
