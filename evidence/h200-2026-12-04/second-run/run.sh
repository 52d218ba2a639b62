#!/bin/bash
# Every GPU check of this session, in one run: versions, `make gpu-check` (kernel and benchmark
# tests, registers, benchmark), the exercise checkers' tests from a process that compiles for the
# GPU (puzzles judged in the interpreter's child), and how long one child check takes.
set -u
cd "$(dirname "$0")/.."
python -m pip install -q --no-deps --target /tmp/np .whl/numpy-2.3.5-*.whl > $OUT/pip.log 2>&1
export PYTHONPATH=/tmp/np:$PWD PAGED_NUM_THREADS=4
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $OUT/nvidia-smi.csv 2>&1
python -c "import sys,torch,triton,numpy;print(sys.version.split()[0],torch.__version__,torch.version.cuda,triton.__version__,numpy.__version__,torch.cuda.get_device_name(0))" > $OUT/versions.txt 2>&1
T0=$(date +%s)
timeout 250 python -m paged.gpu.check --out $OUT/gpu-check --budget-s 220 > $OUT/gpu_check.log 2>&1
echo "gpu-check rc=$? $(( $(date +%s) - T0 )) s" >> $OUT/steps.txt
T0=$(date +%s)
timeout 150 python -m pytest -q -p no:cacheprovider -n 8 --junitxml=$OUT/exercises.xml \
  tests/test_exercises_triton.py tests/test_exercises_kernel_watch.py \
  tests/test_exercises_kernel_child.py tests/test_exercise_specs.py > $OUT/exercises.log 2>&1
echo "exercise tests rc=$? $(( $(date +%s) - T0 )) s" >> $OUT/steps.txt
timeout 45 python .gpu/child_timing.py > $OUT/child_timing.txt 2>&1
echo "child timing rc=$?" >> $OUT/steps.txt
cat $OUT/steps.txt $OUT/versions.txt; tail -3 $OUT/exercises.log; tail -5 $OUT/gpu_check.log; cat $OUT/child_timing.txt | tail -8
