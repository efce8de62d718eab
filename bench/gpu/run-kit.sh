#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the GPU tests (JUnit tag "gpu") of a kit built by bench/gpu/build-kit.sh, with the kit's own
# Java runtime. Usage: run-kit.sh [REPORTS]   (REPORTS: a folder for JUnit's XML reports)
set -uo pipefail
source "$(dirname "$0")/kit-env.sh"
ARGS=(execute --scan-class-path "$KIT/classes/test" --include-tag gpu --details tree
      --disable-banner)
[ -n "${1:-}" ] && ARGS+=(--reports-dir "$1")
# The tests on the JVM's own class path (not the launcher's --class-path): a test that starts
# child JVMs (two ranks on one GPU) hands them java.class.path.
exec "$KIT/jre/bin/java" -Dorg.slf4j.simpleLogger.defaultLogLevel=info \
  -cp "$CP:$(ls "$KIT"/lib/junit-platform-console-standalone-*.jar)" \
  org.junit.platform.console.ConsoleLauncher "${ARGS[@]}"
