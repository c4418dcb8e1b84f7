#!/usr/bin/env bash
# Two installs of the package side by side (e.g. before and after a change), alternated
# ROUNDS times on the same states: cubeswarm.kociemba.solve per call and solve_many's
# throughput (python/bench/calls.py). Each venv has the package installed
# (`python3 -m venv V && V/bin/pip install ./python`, from each tree).
#
#   CUBESWARM_TABLES=DIR python/bench/ab.sh VENV_A VENV_B [ROUNDS] [STATES] [BATCH]
set -euo pipefail
a=$1 b=$2 rounds=${3:-4} states=${4:-1000} batch=${5:-10000}
here=$(cd "$(dirname "$0")" && pwd)
for r in $(seq 1 "$rounds"); do
    if (( r % 2 )); then order="$a $b"; else order="$b $a"; fi
    for v in $order; do
        # Outside the package's source tree, so that the installed copy is imported.
        echo "round $r $v $(cd /tmp && "$v/bin/python" "$here/calls.py" --states "$states" --batch "$batch")"
    done
done
