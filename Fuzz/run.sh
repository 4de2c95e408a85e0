#!/usr/bin/env bash
# Builds the predicate-parser fuzzer with libFuzzer and AddressSanitizer, then runs it.
# Usage: Fuzz/run.sh [SECONDS]   (default 600). Crashing inputs are written to Fuzz/artifacts/.
#
# Built with swiftc directly: SwiftPM renames an executable's entry point, which clashes with the
# `main` that libFuzzer supplies.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-600}"
build=../.build-fuzz
mkdir -p "$build" corpus artifacts
flags=(-O -sanitize=fuzzer,address -parse-as-library -swift-version 6)
# swift-log (the module's one package dependency), from SwiftPM's checkout.
(cd .. && swift package resolve)
swiftc "${flags[@]}" -wmo -module-name Logging -package-name swift_log -emit-module -emit-module-path "$build/Logging.swiftmodule" \
    -c -o "$build/Logging.o" $(find ../.build/checkouts/swift-log/Sources/Logging -name '*.swift' | sort)
swiftc "${flags[@]}" -wmo -module-name OpenCoreData -I "$build" -emit-module -emit-module-path "$build/OpenCoreData.swiftmodule" \
    -I ../Sources/CSQLite -I ../Sources/CZlib -c -o "$build/OpenCoreData.o" $(find ../Sources/OpenCoreData -name '*.swift' | sort)
swiftc "${flags[@]}" -I "$build" -I ../Sources/CSQLite -I ../Sources/CZlib PredicateFuzzer.swift "$build/OpenCoreData.o" "$build/Logging.o" -lsqlite3 -lz -o "$build/predicate-fuzzer"
cp -n seeds/* corpus/ 2>/dev/null || true
# lsan.supp names a leak inside swift-corelibs-foundation's NSRegularExpression (see the file).
export LSAN_OPTIONS="suppressions=$PWD/lsan.supp:print_suppressions=0"
exec "$build/predicate-fuzzer" corpus -artifact_prefix=artifacts/ -max_total_time="$seconds" -max_len=512 \
    -timeout=10 -dict=predicate.dict -print_final_stats=1
