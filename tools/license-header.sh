#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Puts the license header (tools/conf/licenseHeader.java) on every tracked or new Java file that
# lacks it; checkstyle's Header check fails `mvn verify` on a file without it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
header="$root/tools/conf/licenseHeader.java"
lines=$(wc -l < "$header")
cd "$root"
git ls-files --cached --others --exclude-standard -- '*.java' | while read -r f; do
    if ! head -n "$lines" "$f" | cmp -s - "$header"; then
        tmp=$(mktemp)
        cat "$header" "$f" > "$tmp" && cat "$tmp" > "$f" && rm -f "$tmp"
        echo "header added: $f"
    fi
done
