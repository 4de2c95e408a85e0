#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer and AddressSanitizer, then runs each for SECONDS.
# Usage: Fuzz/run.sh [SECONDS] [TARGET...]   (default 600 seconds; targets: predicate store archive
# model atomic, all by default). An input that crashes, trips ASan or runs longer than 10 s stops its
# target and is written to Fuzz/artifacts/; the script then exits non-zero.
#
# Built with swiftc directly: SwiftPM renames an executable's entry point, which clashes with the
# `main` that libFuzzer supplies. Corpora start from seeds/ (predicates, in the repository) and
# from the Apple-written files in ../shared/fixtures, copied into .build-fuzz/ — never into the
# repository.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-600}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(predicate store archive model atomic)
build=../.build-fuzz
fixtures=../../shared/fixtures
mkdir -p "$build" artifacts

# One build of the library's three modules, the core, the SQL layer and the SQLite store (with
# -enable-testing, so targets can reach their decoders), then one link per target.
flags=(-O -sanitize=fuzzer,address -parse-as-library -swift-version 6)
(cd .. && swift package resolve)
swiftc "${flags[@]}" -wmo -module-name Logging -package-name swift_log -emit-module -emit-module-path "$build/Logging.swiftmodule" \
    -c -o "$build/Logging.o" $(find ../.build/checkouts/swift-log/Sources/Logging -name '*.swift' | sort)
swiftc "${flags[@]}" -wmo -enable-testing -package-name opencoredata -module-name OpenCoreData -I "$build" -emit-module \
    -emit-module-path "$build/OpenCoreData.swiftmodule" -I ../Sources/CSQLite -I ../Sources/CZlib -I ../Sources/CPrefetch \
    -c -o "$build/OpenCoreData.o" $(find ../Sources/OpenCoreData -name '*.swift' | sort)
swiftc "${flags[@]}" -wmo -enable-testing -package-name opencoredata -module-name OpenCoreDataSQL -I "$build" \
    -I ../Sources/CPrefetch -emit-module -emit-module-path "$build/OpenCoreDataSQL.swiftmodule" \
    -c -o "$build/OpenCoreDataSQL.o" $(find ../Sources/OpenCoreDataSQL -name '*.swift' | sort)
swiftc "${flags[@]}" -wmo -enable-testing -package-name opencoredata -module-name OpenCoreDataSQLite -I "$build" \
    -emit-module -emit-module-path "$build/OpenCoreDataSQLite.swiftmodule" -I ../Sources/CSQLite -I ../Sources/CZlib -I ../Sources/CPrefetch \
    -c -o "$build/OpenCoreDataSQLite.o" $(find ../Sources/OpenCoreDataSQLite -name '*.swift' | sort)
for target in "${targets[@]}"; do
    source="$(tr '[:lower:]' '[:upper:]' <<<"${target:0:1}")${target:1}Fuzzer.swift"
    swiftc "${flags[@]}" -package-name opencoredata -I "$build" -I ../Sources/CSQLite -I ../Sources/CZlib -I ../Sources/CPrefetch "$source" "$build/OpenCoreData.o" \
        "$build/OpenCoreDataSQL.o" "$build/OpenCoreDataSQLite.o" \
        "$build/Logging.o" -lsqlite3 -lz -o "$build/$target-fuzzer"
done

# Seed corpora. Each Apple-written file a target reads becomes a starting input.
seed() {  # seed TARGET: fills $build/corpus/TARGET from the repository's seeds and the fixtures
    local corpus="$build/corpus/$1"
    mkdir -p "$corpus"
    case "$1" in
        predicate) cp -n seeds/* "$corpus/" 2>/dev/null || true ;;
        store)
            find "$fixtures" -name '*.sqlite' -size -256k -print0 2>/dev/null | while IFS= read -r -d '' file; do
                cp -n "$file" "$corpus/$(basename "$file" | tr ' ' _)"
            done ;;
        archive)
            local n=0
            find "$fixtures" -name '*.sqlite' -print0 2>/dev/null | while IFS= read -r -d '' file; do
                n=$((n + 1))
                # sqlite3's writefile() writes a blob's bytes; the first byte picks the reading.
                sqlite3 -readonly "$file" "SELECT writefile('$build/blob', Z_PLIST) FROM Z_METADATA" >/dev/null 2>&1 &&
                    { printf '\000'; cat "$build/blob"; } >"$corpus/metadata-$n" || true
                sqlite3 -readonly "$file" "SELECT writefile('$build/blob', Z_CONTENT) FROM Z_MODELCACHE" >/dev/null 2>&1 &&
                    { printf '\001'; cat "$build/blob"; } >"$corpus/modelcache-$n" || true
            done
            find "$fixtures" -name '*.mom' -print0 2>/dev/null | while IFS= read -r -d '' file; do
                n=$((n + 1))
                { printf '\002'; cat "$file"; } >"$corpus/mom-$n"
            done ;;
        atomic)
            local n=0
            find "$fixtures" -name 'xcmapping.xml' -print0 2>/dev/null | while IFS= read -r -d '' file; do
                n=$((n + 1))
                { printf '\000'; cat "$file"; } >"$corpus/xcmapping-$n"
            done ;;
        model)
            local n=0
            find "$fixtures" -path '*.xcdatamodel/contents' -print0 2>/dev/null | while IFS= read -r -d '' file; do
                n=$((n + 1))
                cp "$file" "$corpus/contents-$n"
            done ;;
    esac
}

max_len() {
    case "$1" in predicate) echo 512 ;; store | atomic) echo 262144 ;; *) echo 131072 ;; esac
}

# lsan.supp names a leak inside swift-corelibs-foundation's NSRegularExpression (see README.md).
export LSAN_OPTIONS="suppressions=$PWD/lsan.supp:print_suppressions=0"
status=0
for target in "${targets[@]}"; do
    seed "$target"
    options=(-artifact_prefix="artifacts/$target-" -max_total_time="$seconds" -max_len="$(max_len "$target")"
        -timeout=10 -print_final_stats=1)
    # Leaks are checked for predicates only: a model's objects hold each other in reference cycles
    # (an entity and its slot layout), so every model a store or model target loads is reported.
    if [ "$target" = predicate ]; then options+=(-dict=predicate.dict); else options+=(-detect_leaks=0); fi
    # swift-corelibs-foundation's XMLDocument leaks the XMLNode wrappers it makes for elements and
    # attributes (about 3.5 KB per model file read), so the model target outgrows libFuzzer's
    # default 2 GB after about nine minutes; OpenCoreData reads a model file once per load.
    [ "$target" = model ] && options+=(-rss_limit_mb=4096)
    echo "== $target: $seconds s"
    leaks=1
    [ "$target" = predicate ] || leaks=0
    ASAN_OPTIONS="detect_leaks=$leaks" SWIFT_BACKTRACE=enable=no \
        "$build/$target-fuzzer" "$build/corpus/$target" "${options[@]}" || status=$?
done
exit $status
