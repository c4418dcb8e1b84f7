#!/usr/bin/env bash
# The Python package as a machine without Rust gets it: one abi3 wheel, built once, checked
# for manylinux2014 (manylinux_2_17) compliance, installed into a fresh virtual environment
# whose PATH has no cargo or rustc, and tested there with the pytest suite.
#
# The wheel is built by `pip wheel ./python`: the PEP 517 hook that `pip install ./python`
# calls, so the one release build of the extension covers both ways of installing. maturin
# (and zig, its linker against glibc 2.17's symbols) come from PyPI into a build venv; the
# crates from crates.io. The wheel is left in target/wheels/.
#
# Run by .ci/run after `cargo test` (which built the binary and the test tables):
#   python/ci-wheel.sh target/debug/cubeswarm target/test-tables
set -euo pipefail

BIN=${1:?usage: python/ci-wheel.sh CUBESWARM_BINARY TABLES_DIR}
TABLES=${2:?usage: python/ci-wheel.sh CUBESWARM_BINARY TABLES_DIR}
BIN=$(realpath "$BIN")
mkdir -p "$TABLES"
TABLES=$(realpath "$TABLES")
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/target/wheels
# Pinned so that the platform tag and its check do not change under CI by themselves.
MATURIN=maturin==1.16.0
ZIG=ziglang==0.17.1
AUDITWHEEL=auditwheel==6.8.2
TAG=manylinux_2_17_x86_64

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "ci-wheel: $*" >&2; exit 1; }

# 1. Build. maturin refuses to tag the wheel manylinux2014 when the extension needs a newer
# glibc symbol or a library outside the policy (--auditwheel check: fail, never bundle).
python3 -m venv "$WORK/build"
"$WORK/build/bin/pip" install --quiet --only-binary :all: "$MATURIN" "$ZIG" "$AUDITWHEEL"
rm -rf "$OUT"
mkdir -p "$OUT"
START=$(date +%s)
PATH="$WORK/build/bin:$PATH" \
    MATURIN_PEP517_ARGS="--zig --compatibility manylinux2014 --auditwheel check" \
    "$WORK/build/bin/pip" wheel --no-build-isolation --no-deps --wheel-dir "$OUT" ./python
SECONDS_TAKEN=$(( $(date +%s) - START ))
WHEELS=("$OUT"/cubeswarm-*.whl)
[ "${#WHEELS[@]}" = 1 ] && [ -f "${WHEELS[0]}" ] || fail "expected one wheel in $OUT, found: ${WHEELS[*]}"
WHEEL=${WHEELS[0]}
case "$(basename "$WHEEL")" in
    *-cp39-abi3-*"$TAG"*) ;;
    *) fail "$(basename "$WHEEL") is not an abi3 $TAG wheel" ;;
esac
SIZE=$(stat -c %s "$WHEEL")
echo "ci-wheel: wheel $(basename "$WHEEL"), $SIZE bytes ($(( (SIZE + 524288) / 1048576 )) MiB), built in ${SECONDS_TAKEN} s"
echo "ci-wheel: disk after the build: $(df -h --output=avail . | tail -1 | tr -d ' ') free," \
    "${CARGO_TARGET_DIR:-python/target} $(du -sh "${CARGO_TARGET_DIR:-python/target}" | cut -f1)"

# 2. A second opinion on compliance, by PyPA's auditwheel: the tag its symbol-version and
# library audit allows must be the one the file name claims.
"$WORK/build/bin/auditwheel" show "$WHEEL" | tee "$WORK/auditwheel.txt"
# (Its text is wrapped to the terminal: lines are joined before the match.)
tr '\n' ' ' < "$WORK/auditwheel.txt" | grep -q "platform tag: \"$TAG\"" \
    || fail "auditwheel does not find $(basename "$WHEEL") consistent with $TAG"

# 3. The test venv. pytest (pure Python) comes from PyPI first, with the ordinary
# environment; everything after runs with nothing of it: env -i, a HOME of its own and a
# PATH of the venv's bin only.
python3 -m venv "$WORK/test"
"$WORK/test/bin/pip" install --quiet --only-binary :all: pytest
mkdir "$WORK/home"
NORUST=(env -i HOME="$WORK/home" PATH="$WORK/test/bin" LANG=C.UTF-8)
for tool in cargo rustc rustup; do
    if found=$("${NORUST[@]}" /bin/sh -c "command -v $tool"); then
        fail "$tool is on the test PATH ($found)"
    fi
done
echo "ci-wheel: no cargo, rustc or rustup on the test PATH ($WORK/test/bin)"

# 4. Install the one wheel: no index, binaries only, so no source build can stand in for it.
"${NORUST[@]}" "$WORK/test/bin/python" -m pip install --no-cache-dir --no-index \
    --only-binary :all: --find-links "$OUT" cubeswarm
NATIVE=$(cd "$WORK" && "${NORUST[@]}" "$WORK/test/bin/python" -c \
    'import cubeswarm._native as n; print(n.__file__)')
case "$NATIVE" in
    "$WORK/test/"*) echo "ci-wheel: cubeswarm._native from $NATIVE" ;;
    *) fail "cubeswarm._native imported from $NATIVE, not from the test venv" ;;
esac

# 5. The suite against that install, run from outside the source tree (no pytest cache in
# it). Its closing line is the last of the script, and of .ci/run.
cd "$WORK"
"${NORUST[@]}" CUBESWARM_BIN="$BIN" CUBESWARM_TEST_TABLES="$TABLES" \
    "$WORK/test/bin/python" -m pytest -q -p no:cacheprovider "$ROOT/python/tests"
