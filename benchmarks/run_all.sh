#!/usr/bin/env bash
# Every benchmark of benchmarks/, one after another, each under its own time limit, output to DIR (default
# benchmarks/results/run-DATE), most important first. Used for the recorded runs (results/*.md); on a GPU machine
# PyTorch runs on cuda, and overhead.py runs a second time with JAX_PLATFORMS=cpu (the host's CPU).
#   bash benchmarks/run_all.sh [DIR] [--tests]
# --tests adds a short slice of the test suite on this machine's default JAX backend (a GPU check).
# STAGES="workload_a overhead ..." runs only the named stages; SYSTEMS="default,compile,..." is passed to the workload
# stages as --systems (e.g. to leave out the node-by-node system, whose compiles take minutes on a GPU host).
set -u
cd "$(dirname "$0")/.."
DIR=${1:-benchmarks/results/run-$(date +%F)}
mkdir -p "$DIR"
export PYTHONUNBUFFERED=1 PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD XLA_PYTHON_CLIENT_PREALLOCATE=false
PY=${PYTHON:-python3}
stage() {  # stage NAME LIMIT_S CMD...
  local name=$1 limit=$2; shift 2
  [ -z "${STAGES:-}" ] || [[ " $STAGES " == *" $name "* ]] || return 0
  echo "=== $name ($(date +%T), limit ${limit}s)" | tee -a "$DIR/log.txt"
  timeout "$limit" "$@" 2>&1 | tee "$DIR/$name.txt" | grep -v "^WARNING" >> "$DIR/log.txt"
  echo "=== $name exit ${PIPESTATUS[0]} ($(date +%T))" | tee -a "$DIR/log.txt"
}
{ date -u; nvidia-smi -L 2>/dev/null; nproc; "$PY" -c "import sys, jax, torch; print(sys.version.split()[0], 'jax', jax.__version__, jax.devices(), 'torch', torch.__version__)"; } 2>&1 | tee "$DIR/env.txt" >> "$DIR/log.txt"
if [ "${2:-}" = "--tests" ]; then
  stage tests 90 "$PY" -m pytest -q -rfE --maxfail=5 --tb=short -p no:cacheprovider -n 8 tests/test_smoke_core.py \
    tests/test_compile_core.py tests/test_paths.py tests/test_nn_linear_conv.py tests/test_nn_dropout_embedding.py \
    tests/test_nn_rnn.py
fi
for w in a b c d; do  # (d) compiles the most: its node-by-node system took over 120 s on a slow GPU host
  stage "workload_$w" "$([ $w = d ] && echo 240 || echo 120)" "$PY" benchmarks/workloads.py --only "$w" \
    --json "$DIR/workload_$w.json" ${SYSTEMS:+--systems "$SYSTEMS"}
done
stage data_loop 90 "$PY" benchmarks/data_loop.py
stage compile_overhead 90 "$PY" benchmarks/compile_overhead.py --steps 300
stage overhead 75 "$PY" benchmarks/overhead.py --json "$DIR/overhead.json"
JAX_PLATFORMS=cpu stage overhead_cpu 75 "$PY" benchmarks/overhead.py
stage torch_compile 120 "$PY" benchmarks/workloads.py --torch-compile --systems torch.compile
stage random_draws 60 "$PY" benchmarks/random_draws.py
stage memory 45 "$PY" benchmarks/memory.py
stage optim_step 45 "$PY" benchmarks/optim_step.py
