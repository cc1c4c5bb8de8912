#!/usr/bin/env bash
# The fuzz suites for as long as one wants: every *.fuzz.test.js of the build with CASES cases
# each (default 20000) from SEED (default: a new one, printed). A failure prints its seed and
# counterexample; `bash scripts/fuzz.sh CASES SEED` with the same two numbers reproduces it.
# Needs a build (npm run build); no root, no network.
#
#   bash scripts/fuzz.sh            # 20000 cases per suite, a random seed
#   bash scripts/fuzz.sh 100000 29  # 100000 cases per suite from seed 29
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${1:-20000}"
seed="${2:-$((RANDOM * 32768 + RANDOM))}"
mapfile -t files < <(find dist -name '*.fuzz.test.js' | sort)
if [ "${#files[@]}" -eq 0 ]; then
  echo "no fuzz suites under dist/: run npm run build first" >&2
  exit 1
fi
echo "fuzz: ${#files[@]} files, ${cases} cases per suite, seed ${seed}"
FUZZ_RUNS="$cases" FUZZ_SEED="$seed" exec node --test --test-concurrency=1 --test-timeout=0 "${files[@]}"
