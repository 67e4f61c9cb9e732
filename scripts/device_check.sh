#!/usr/bin/env bash
# The GPU check: runs unattended on a Linux x86-64 machine with NVIDIA GPU(s), nvcc, CMake,
# Ninja and Python with a CUDA PyTorch 2.x, and NO package access. Copy the source tree
# there together with build/device-debs/ (made here by scripts/device_packages.sh), then:
#
#   OUT=/some/folder scripts/device_check.sh      # summary.json, summary.md, logs in $OUT
#
# Within 10 minutes (LRB_DEVICE_CHECK_SECONDS) it
#  1. unpacks the Debian 12 .debs (HDF5, Open MPI, toml++, CLI11, nlohmann-json, fmt,
#     Boost, GoogleTest) into a private prefix (dpkg -x, or ar + tar), checking SHA256SUMS;
#  2. builds lrbench with -DLRB_WITH_CUDA=ON against PyTorch's LibTorch
#     (torch.utils.cmake_prefix_path). The C++ ABI: PyTorch wheels before 2.7 use the old
#     std::string ABI (torch._C._GLIBCXX_USE_CXX11_ABI = False), Debian's C++ libraries the
#     new one; TorchConfig puts its -D_GLIBCXX_USE_CXX11_ABI on everything that links torch,
#     and cmake/cxx_abi.cmake then uses fmt and toml++ header-only and builds
#     GoogleTest from its sources, so nothing compiled with the other ABI is linked. The
#     ABI Python reports is checked against the one CMake found;
#     With PyTorch's NCCL (the nvidia.nccl package) it adds -DLRB_WITH_NCCL=ON;
#  3. runs every attention kernel test on the GPU against its float64 reference on the CPU
#     (LRB_TEST_DEVICE=cuda), the model tests, AdamW's multi-tensor update against LibTorch's
#     step on the device (FusedAdamW.*), and the gradient exchange's tests (with NCCL:
#     a communicator of one member created, a sum on the device, reuse, teardown);
#  4. the quickstart sweep on the GPU (5 models x 3 seeds, ListOps-256) with the quickstart's
#     two claims: step time, utilisation against the measured matmul peak, and the verdicts,
#     compared with the same sweep's verdicts on this machine's CPU;
#  4a. bf16 against fp32: the same sweep in both precisions with the claims of
#     workloads/sweeps/claims/bf16.toml (bf16 native on the GPU; emulated on the CPU fallback);
#  4b. lrbench's attention kernels (lrb_kernel_timing: dense, sliding window, block sparse)
#     beside PyTorch's scaled_dot_product_attention and FlexAttention with a sliding-window
#     block mask (scripts/pytorch_attention_timing.py), forward + backward, N = 4K to 64K:
#     time and peak memory, as a table (kernels.md);
#  5. the MAELRE memory study: the largest training batch within 16 GiB held by the CUDA
#     caching allocator, at N = 2048 and 4096 (the paper reports 180 and 90);
#  6. a matched-seed determinism check: the same sweep twice, identical per-seed losses;
#  7. with two or more GPUs, a 2-rank sweep under the prefix's mpirun, one GPU per rank, and
#     a data-parallel sweep (ranks_per_run = 2: one run on both GPUs).
# Every step is recorded (ok / failed / not run, with why) with its figures.
#
# LRB_DEVICE_CHECK_CPU=1 runs the same steps on the CPU, with small sizes (CI does, with
# LRB_DEVICE_CHECK_REUSE_BUILD=build to reuse scripts/test.sh's build and only configure
# against the prefix): it tests everything but the GPU itself. Exit code: 0 when every
# step that ran passed, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
src=$PWD
cpu=${LRB_DEVICE_CHECK_CPU:-0}
budget=${LRB_DEVICE_CHECK_SECONDS:-600}
started=$(date +%s)
out=${OUT:-$src/device-check-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out" || { echo "device_check: cannot create $out" >&2; exit 1; }
out=$(cd "$out" && pwd)
exec > >(tee "$out/device_check.log") 2>&1
debs=${LRB_DEVICE_DEBS:-$src/build/device-debs}
prefix=${LRB_DEVICE_PREFIX:-$src/build/device-prefix}
reuse=${LRB_DEVICE_CHECK_REUSE_BUILD:-}
jobs=${LRB_JOBS:-$(nproc)}
if [ "$cpu" = 1 ]; then device=cpu; build=${LRB_DEVICE_CHECK_BUILD:-$src/build/device-check-cpu}
else device=cuda; build=${LRB_DEVICE_CHECK_BUILD:-$src/build/device-check}; fi
echo "device_check: mode $device, summary in $out (started $(date -u +%FT%TZ) on $(hostname))"

steps=$out/steps.tsv
figures=$out/figures.tsv
printf 'step\tstatus\tseconds\tdetail\n' >"$steps"
printf 'name\tvalue\tnote\n' >"$figures"
failed=0
figure() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-}" >>"$figures"; }
remaining() { echo $(( budget - ($(date +%s) - started) )); }
# step NAME DETAIL CMD...: runs CMD within the time left, records ok / failed and seconds.
step() {
  local name=$1 detail=$2; shift 2
  local left; left=$(remaining)
  if [ "$left" -le 5 ]; then
    printf '%s\tnot run\t0\tno time left of %s s\n' "$name" "$budget" >>"$steps"; failed=1
    echo "device_check: $name: NOT RUN (no time left)"; return 1
  fi
  echo "device_check: === $name ($detail; $left s left)"
  local t0; t0=$(date +%s)
  # Shell functions bound their own commands by the time left (timeout runs programs only).
  if declare -F "$1" >/dev/null; then "$@" >"$out/$name.log" 2>&1
  else timeout --kill-after=10 "$left" "$@" >"$out/$name.log" 2>&1; fi
  local rc=$?
  local secs=$(( $(date +%s) - t0 ))
  if [ "$rc" -eq 0 ]; then
    printf '%s\tok\t%s\t%s\n' "$name" "$secs" "$detail" >>"$steps"; echo "device_check: $name: ok ($secs s)"
  else
    printf '%s\tfailed\t%s\t%s (exit %s; log %s.log)\n' "$name" "$secs" "$detail" "$rc" "$name" >>"$steps"; failed=1
    echo "device_check: $name: FAILED with exit $rc after $secs s; last lines of $out/$name.log:"; tail -15 "$out/$name.log"
  fi
  return "$rc"
}
not_run() { printf '%s\tnot run\t0\t%s\n' "$1" "$2" >>"$steps"; echo "device_check: $1: not run: $2"; }

write_summary() {
  python3 - "$out" "$device" "$(( $(date +%s) - started ))" <<'PY'
import csv, json, sys, os
out, device, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3])
read = lambda f: list(csv.DictReader(open(os.path.join(out, f)), delimiter="\t"))
steps, figures = read("steps.tsv"), read("figures.tsv")
summary = {"device": device, "seconds": seconds, "ok": all(s["status"] == "ok" for s in steps if s["status"] != "not run"),
           "steps": steps, "figures": {f["name"]: {"value": f["value"], "note": f["note"]} for f in figures},
           "note": "GPU figures come from a real GPU only when device is cuda; device cpu is the CPU fallback"}
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=2)
with open(os.path.join(out, "summary.md"), "w") as md:
    md.write(f"# lrbench device check ({device}, {seconds} s)\n\n| step | status | seconds | detail |\n| --- | --- | ---: | --- |\n")
    for s in steps: md.write(f"| {s['step']} | {s['status']} | {s['seconds']} | {s['detail']} |\n")
    md.write("\n| figure | value | note |\n| --- | --- | --- |\n")
    for f in figures: md.write(f"| {f['name']} | {f['value']} | {f['note']} |\n")
PY
}
trap 'write_summary; echo "device_check: summary: $out/summary.md, $out/summary.json"' EXIT

# ---- 1. unpack the packages into the prefix ------------------------------------------
unpack() {
  [ -f "$debs/SHA256SUMS" ] || { echo "no $debs/SHA256SUMS: run scripts/device_packages.sh where packages can be had"; return 1; }
  (cd "$debs" && sha256sum --quiet -c SHA256SUMS) || { echo "a package in $debs does not match SHA256SUMS"; return 1; }
  rm -rf "$prefix.tmp" && mkdir -p "$prefix.tmp"
  local deb
  for deb in "$debs"/*.deb; do
    if command -v dpkg-deb >/dev/null; then dpkg-deb -x "$deb" "$prefix.tmp" || return 1
    else  # no dpkg on the GPU machine: a .deb is an ar archive holding data.tar.*
      local t; t=$(mktemp -d)
      (cd "$t" && ar x "$deb" && tar -xf data.tar.* -C "$prefix.tmp") || return 1
      rm -rf "$t"
    fi
  done
  # Absolute symlinks point into the host's /usr: point them into the prefix instead.
  find "$prefix.tmp" -type l -lname '/*' | while read -r l; do ln -sfn "$prefix$(readlink "$l")" "$l"; done
  # Links that Debian's maintainer scripts make (update-alternatives), used below. Open MPI's
  # wrapper (mpicxx) and mpirun find everything else through OPAL_PREFIX.
  ln -sfn mpirun.openmpi "$prefix.tmp/usr/bin/mpirun"
  rm -rf "$prefix" && mv "$prefix.tmp" "$prefix"
  du -sh "$prefix"
}
step unpack "$(ls "$debs"/*.deb 2>/dev/null | wc -l) .debs from $debs into $prefix" unpack || exit 1
figure debs_mib "$(du -sm "$debs" | cut -f1)" "size of the package folder (limit 60)"
libdir=$prefix/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$libdir:$libdir/openmpi/lib:$libdir/hdf5/serial${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OPAL_PREFIX=$prefix/usr PATH=$prefix/usr/bin:$PATH

# ---- 2. LibTorch and the build --------------------------------------------------------
torch_info=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path, torch.__version__, torch.version.cuda, int(torch._C._GLIBCXX_USE_CXX11_ABI), torch.cuda.device_count())' 2>/dev/null)
if [ -n "$torch_info" ]; then
  read -r torch_cmake torch_version torch_cuda torch_abi gpus <<<"$torch_info"
  torch_dir=$torch_cmake/Torch
elif [ "$cpu" = 1 ] && [ -f /usr/lib/x86_64-linux-gnu/cmake/Torch/TorchConfig.cmake ]; then
  torch_dir=/usr/lib/x86_64-linux-gnu/cmake/Torch torch_version=debian torch_cuda=None torch_abi=1 gpus=0
else
  echo "device_check: no PyTorch: python3 -c 'import torch' failed" >&2; not_run build "no PyTorch in python3"; exit 1
fi
figure torch "$torch_version (CUDA $torch_cuda, C++11 ABI $torch_abi)" "$torch_dir"
figure gpus "$gpus" "torch.cuda.device_count()"
if [ "$device" = cuda ] && [ "$gpus" -lt 1 ]; then not_run build "no GPU visible to PyTorch"; exit 1; fi

cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DTorch_DIR="$torch_dir" -DLRB_BUILD_BENCHMARKS=OFF
  -DCMAKE_PREFIX_PATH="$prefix/usr;$libdir/cmake"
  -DMPI_CXX_COMPILER="$prefix/usr/bin/mpicxx.openmpi" -DMPI_CXX_SKIP_MPICXX=ON
  -DHDF5_ROOT="$prefix/usr" -DHDF5_C_INCLUDE_DIR="$prefix/usr/include/hdf5/serial"
  -DHDF5_hdf5_LIBRARY_RELEASE="$libdir/hdf5/serial/libhdf5.so" -DHDF5_NO_FIND_PACKAGE_CONFIG_FILE=ON
  -DOPENSSL_ROOT_DIR="$prefix/usr" -DZLIB_ROOT="$prefix/usr" -DBoost_NO_SYSTEM_PATHS=ON -DBOOST_ROOT="$prefix/usr"
  -DLRB_GTEST_SOURCE_DIR="$prefix/usr/src/googletest")
if [ "$device" = cuda ]; then cmake_args+=(-DLRB_WITH_CUDA=ON); else cmake_args+=(-DLRB_HEADER_ONLY_DEPS=ON); fi
# NCCL for data-parallel groups: PyTorch's CUDA wheel brings it (nvidia-nccl-cu12 / -cu13).
nccl_root=$(python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null || true)
if [ "$device" = cuda ] && [ -n "$nccl_root" ] && [ -f "$nccl_root/include/nccl.h" ]; then
  cmake_args+=(-DLRB_WITH_NCCL=ON -DNCCL_ROOT="$nccl_root")
  figure nccl "built in" "$nccl_root"
else
  figure nccl "not built in" "$([ "$device" = cuda ] && echo "no nccl.h in PyTorch's nvidia.nccl package" || echo "CPU fallback")"
fi
# The prefix of unpacked packages lies inside the source tree: CMake refuses to export its
# include paths, and nothing is installed from this build.
cmake_args+=(-DLRB_INSTALL=OFF)
configure() {
  cmake -S "$src" -B "$1" "${cmake_args[@]}" || return 1
  # Every dependency but LibTorch (and the C/C++ runtime) must come from the prefix.
  local bad
  bad=$(grep -E '^((fmt|tomlplusplus|nlohmann_json|CLI11|Boost|GTest)_DIR|HDF5_C_INCLUDE_DIR|HDF5_hdf5_LIBRARY_RELEASE|MPI_mpi_LIBRARY|MPI_CXX_HEADER_DIR|OPENSSL_INCLUDE_DIR|ZLIB_INCLUDE_DIR):[A-Z]+=' "$1/CMakeCache.txt" \
        | grep -v "=$prefix" | grep -v -- '-NOTFOUND$' || true)
  if [ -n "$bad" ]; then echo "found outside the prefix $prefix:"; echo "$bad"; return 1; fi
  grep -E 'LRB_HEADER_ONLY_DEPS|LRB_WITH_CUDA|LRB_WITH_NCCL' "$1/CMakeCache.txt"
}
if [ -n "$reuse" ]; then
  # CI: the tests below run on scripts/test.sh's build; the prefix is checked by a configure.
  rm -rf "$build-configure"
  step configure "configure against the prefix (header-only deps), build reused from $reuse" configure "$build-configure"
  build=$reuse
else
  step configure "LibTorch $torch_version, ABI $torch_abi" configure "$build" &&
    step build "lrbench, lrb_tests and lrb_kernel_timing, -j $jobs (-k 0: every failing source reported)" \
      cmake --build "$build" -j "$jobs" --target lrbench lrb_tests lrb_kernel_timing -- -k 0 || exit 1
  build_abi=1
  grep -q '_GLIBCXX_USE_CXX11_ABI=0' "$build/compile_commands.json" && build_abi=0
  figure cxx11_abi "PyTorch $torch_abi, build $build_abi" "torch._C._GLIBCXX_USE_CXX11_ABI against the build's flags: must agree"
  if [ "$build_abi" != "$torch_abi" ]; then
    echo "device_check: the build's C++ ABI ($build_abi) is not PyTorch's ($torch_abi)"
    printf 'cxx11_abi\tfailed\t0\tPyTorch %s, build %s\n' "$torch_abi" "$build_abi" >>"$steps"; failed=1
  fi
fi
lrbench=$build/lrbench
tests=$build/tests/lrb_tests
step doctor "lrbench doctor" "$lrbench" doctor && sed -n '/^CUDA/,/^NCCL/p' "$out/doctor.log" | head -12

# ---- 3. kernel and model tests --------------------------------------------------------
test_env=()
[ "$device" = cuda ] && test_env=(LRB_TEST_DEVICE=cuda)
step kernel_tests "every attention kernel on $device against the float64 reference" \
  env "${test_env[@]}" "$tests" --gtest_filter='Attention*:-AttentionMemory*' --gtest_brief=1
no_tests() { grep -q '^\[  PASSED  \] 0 tests' "$out/$1.log" && { echo "device_check: $1 ran no test"; sed -i "s/^$1\tok\t/$1\tfailed\t/" "$steps"; failed=1; }; }
no_tests kernel_tests
figure kernel_tests "$(grep -E '^\[  (PASSED|FAILED)  \]' "$out/kernel_tests.log" | tr '\n' ' ')" "LRB_TEST_DEVICE=$device"
step model_tests "model contract tests (CPU tensors; the models run on $device in the sweeps below)" \
  "$tests" --gtest_filter='Model*' --gtest_brief=1
no_tests model_tests
figure model_tests "$(grep -E '^\[  (PASSED|FAILED)  \]' "$out/model_tests.log" | tr '\n' ' ')" ""
step optimizer_tests "AdamW's multi-tensor update on $device against LibTorch's step (FusedAdamW)" \
  env "${test_env[@]}" "$tests" --gtest_filter='FusedAdamW.*' --gtest_brief=1
no_tests optimizer_tests
figure optimizer_tests "$(grep -E '^\[  (PASSED|FAILED)  \]' "$out/optimizer_tests.log" | tr '\n' ' ')" "LRB_TEST_DEVICE=$device"
# NCCL with one GPU: a communicator of one member created, a gradient sum on the device,
# reuse by a second run, teardown (skipped, with the reason, without NCCL or a GPU).
step nccl_tests "the gradient exchange over MPI and, with NCCL and a GPU, over NCCL" \
  "$tests" --gtest_filter='GradientExchange.*'
no_tests nccl_tests
figure nccl_one_gpu "$(grep -q '^\[  SKIPPED \] GradientExchange.OverNccl' "$out/nccl_tests.log" && echo skipped || echo ran)" \
  "$(awk '/RUN .*GradientExchange.OverNcclOnOneGpu/ { f = 1 } f && /Skipped$/ { getline; print; exit }' "$out/nccl_tests.log")"

# ---- sweeps ---------------------------------------------------------------------------
sweeps=$out/sweeps
mkdir -p "$sweeps"
if [ "$device" = cuda ]; then qs_steps=200 qs_seeds=3 qs_train=2000 qs_eval=256 qs_every=100; else qs_steps=12 qs_seeds=1 qs_train=200 qs_eval=64 qs_every=6; fi
{
  printf '[sweep]\nname = "device-quickstart"\nseeds = %s\nbase_seed = 1\ndevice = "%s"\nthreads = %s\n\n' "$qs_seeds" "$device" "$([ "$device" = cuda ] && echo 4 || echo 1)"
  printf '[train]\nsteps = %s\nbatch_size = 16\nlr = 2e-3\nwarmup_steps = 2\neval_every = %s\neval_size = %s\n\n' "$qs_steps" "$qs_every" "$qs_eval"
  printf '[[task]]\nname = "listops"\nseq_len = 256\ntrain_size = %s\n\n' "$qs_train"
  printf '[[model]]\nname = "transformer"\ndim = 64\ndepth = 2\nheads = 4\n\n[[model]]\nname = "longformer"\ndim = 64\ndepth = 2\nheads = 4\nwindow = 32\n\n'
  printf '[[model]]\nname = "bigbird"\ndim = 64\ndepth = 2\nheads = 4\nblock = 16\nrandom_blocks = 2\n\n'
  printf '[[model]]\nname = "mvit2"\npreset = "tiny"\ndim = 32\n\n[[model]]\nname = "maelre"\npreset = "tiny"\ndim = 32\n\n'
  # The quickstart's two claims (workloads/sweeps/quickstart.toml), on this sweep's runs.
  printf '[[claim]]\nname = "maelre-step-memory"\nstatement = "MAELRE needs less memory for a training step than the Transformer"\n'
  printf 'source = "MAELRE (arXiv 2507.19409), abstract and Table 1"\n'
  printf 'kind = "better"\nmetric = "peak_step_bytes"\na = { model = "maelre" }\nb = { model = "transformer" }\n\n'
  printf '[[claim]]\nname = "maelre-accuracy-near-mvit2"\nstatement = "MAELRE'"'"'s accuracy is within 2 points of mViTv2'"'"'s"\n'
  printf 'source = "MAELRE (arXiv 2507.19409), Table 4"\n'
  printf 'kind = "not-worse"\nmetric = "accuracy"\nmargin = 0.02\na = { model = "maelre" }\nb = { model = "mvit2" }\n'
} >"$sweeps/quickstart.toml"
if [ "$device" = cuda ]; then mb_budget=16GiB mb_preset=small mb_max=4096 mb_lens="2048, 4096"
else mb_budget=1GiB mb_preset=tiny mb_max=64 mb_lens="512, 1024"; fi
cat >"$sweeps/max-batch.toml" <<EOF
# MAELRE's Table 1: the largest training batch within $mb_budget, at N = $mb_lens.
[sweep]
name = "device-max-batch"
seeds = 1
base_seed = 5
device = "$device"
threads = $([ "$device" = cuda ] && echo 4 || echo 1)

[train]
batch_size = 2

[measure]
budget = "$mb_budget"
max_batch = $mb_max
steps = 1

[[task]]
name = "retrieval"
seq_len = [$mb_lens]
train_size = 4

[[model]]
name = "maelre"
preset = "$mb_preset"
EOF
sed -e 's/name = "device-quickstart"/name = "device-determinism"/' -e 's/^seeds = .*/seeds = 1/' "$sweeps/quickstart.toml" >"$sweeps/determinism.toml"

# ---- 4. quickstart --------------------------------------------------------------------
if step quickstart "quickstart sweep on $device" "$lrbench" run "$sweeps/quickstart.toml" --out "$out/quickstart"; then
  "$lrbench" report "$out/quickstart" --resamples 1000 --format md -o "$out/quickstart/report.md" >/dev/null 2>&1
  "$lrbench" report "$out/quickstart" --resamples 1000 --format json -o "$out/quickstart/report.json" >/dev/null 2>&1
  python3 - "$out/quickstart/report.json" >>"$figures" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
for c in report.get("cells", []):
    s = c.get("setting") or {}
    print(f"quickstart {c['model']} accuracy\t{c['mean']}\tmean over {c['n']} seed(s), chance {c.get('chance')}")
    eff = c.get("efficiency", {})
    if "step_seconds_median" in eff: print(f"quickstart {c['model']} step seconds\t{eff['step_seconds_median']['median']}\tmedian")
    if "flop_utilisation" in eff:
        print(f"quickstart {c['model']} utilisation\t{eff['flop_utilisation']['median']:.4f}\tmodel FLOP/s over the measured matmul peak (median)")
    if "peak_bytes" in eff: print(f"quickstart {c['model']} peak MiB\t{eff['peak_bytes']['median'] / 2**20:.1f}\tmedian")
for v in report.get("claims", []):
    print(f"quickstart claim {v['name']}\t{v['verdict']}\t{v.get('why', '')[:160]}")
PY
  # The same sweep on this machine's CPU: the verdicts must not depend on the device (a
  # difference is recorded as a finding, with both reports kept, not as a failed step).
  if [ "$device" = cuda ]; then
    sed -e 's/^device = "cuda"/device = "cpu"/' -e 's/^threads = .*/threads = 4/' "$sweeps/quickstart.toml" >"$sweeps/quickstart-cpu.toml"
    if step quickstart_cpu "the same quickstart on the CPU (3 ranks x 4 threads), for its verdicts" \
        mpirun --allow-run-as-root --oversubscribe --bind-to none -np 3 "$lrbench" run "$sweeps/quickstart-cpu.toml" --out "$out/quickstart-cpu"; then
      "$lrbench" report "$out/quickstart-cpu" --resamples 1000 --format json -o "$out/quickstart-cpu/report.json" >/dev/null 2>&1
      python3 - "$out/quickstart/report.json" "$out/quickstart-cpu/report.json" >>"$figures" <<'PY'
import json, sys
gpu, cpu = ({v["name"]: v["verdict"] for v in json.load(open(f)).get("claims", [])} for f in sys.argv[1:3])
same = gpu == cpu and len(gpu) == 2
print(f"quickstart verdicts as on the CPU\t{'yes' if same else 'NO'}\tGPU {gpu}; CPU {cpu}")
PY
    fi
  fi
fi

# ---- 4a. bf16 against fp32 ---------------------------------------------------------------
# The study workloads/sweeps/claims/bf16.toml (its claims: bf16 within half a point of fp32's
# accuracy, bf16's step faster) on the quickstart sweep above: every model in both
# precisions. On the CPU fallback, LibTorch's emulation (LRB_BF16_WITHOUT_HARDWARE=1, 4-19x
# slower than fp32) on the Transformer alone, 4 steps: it checks the step, not bf16.
if [ "$device" = cuda ]; then bf16_models=all bf16_steps=$qs_steps; else bf16_models=transformer bf16_steps=4; fi
python3 - "$sweeps/quickstart.toml" "$src/workloads/sweeps/claims/bf16.toml" "$bf16_models" "$bf16_steps" >"$sweeps/bf16.toml" <<'PY'
import re, sys
sweep, study = (open(f).read() for f in sys.argv[1:3])
keep, steps = sys.argv[3], sys.argv[4]
def kept(block):  # a [[model]] or [[claim]] block of a model this step runs
    m = re.search(r'^(?:name|a = \{ model) = "([a-z0-9]+)"', block, re.M)
    return keep == "all" or (m is not None and m.group(1) == keep)
head, *models = sweep[:sweep.index("[[claim]]")].split("[[model]]")
head = head.replace('name = "device-quickstart"', 'name = "device-bf16"')
head = re.sub(r"^steps = \d+", f"steps = {steps}", head, flags=re.M).replace("[train]\n", '[train]\nprecision = ["fp32", "bf16"]\n', 1)
claims = study[study.index("[[claim]]"):].split("[[claim]]")[1:]
print(head + "".join("[[model]]" + b for b in models if kept(b)) + "".join("[[claim]]" + b for b in claims if kept(b)))
PY
if step bf16 "bf16 against fp32 on $device (the bf16 study's claims)" \
    env LRB_BF16_WITHOUT_HARDWARE="$([ "$device" = cuda ] && echo 0 || echo 1)" "$lrbench" run "$sweeps/bf16.toml" --out "$out/bf16"; then
  "$lrbench" report "$out/bf16" --resamples 1000 --format md -o "$out/bf16/report.md" >/dev/null 2>&1
  "$lrbench" report "$out/bf16" --resamples 1000 --format json -o "$out/bf16/report.json" >/dev/null 2>&1
  python3 - "$out/bf16/report.json" >>"$figures" <<'PY'
import json, sys
for v in json.load(open(sys.argv[1])).get("claims", []):
    print(f"bf16 claim {v['name']}\t{v['verdict']}\t{v.get('why', '')[:160]}")
PY
fi

# ---- 4b. attention kernels against PyTorch's --------------------------------------------
# lrbench's dense, sliding-window and block-sparse kernels (lrb_kernel_timing) beside
# PyTorch's scaled_dot_product_attention and FlexAttention with a sliding-window block
# mask (scripts/pytorch_attention_timing.py), forward + backward, time and peak memory.
if [ "$device" = cuda ]; then kt_sizes=4096,8192,16384,32768,65536 kt_repeats=5; else kt_sizes=512,1024 kt_repeats=2; fi
kernel_table() {
  "$build/tests/lrb_kernel_timing" --device "$device" --n "$kt_sizes" --repeats "$kt_repeats" >"$out/kernels-lrbench.jsonl" || return 1
  if [ "$device" = cuda ]; then
    "$build/tests/lrb_kernel_timing" --device cuda --n "$kt_sizes" --repeats "$kt_repeats" --kernels sliding_window,block_sparse \
      --max-score-elements 67108864 | sed 's/"kernel":"\([a-z_]*\)"/"kernel":"\1 (large groups)"/' >>"$out/kernels-lrbench.jsonl" || return 1
  fi
  python3 "$src/scripts/pytorch_attention_timing.py" --device "$device" --n "$kt_sizes" --repeats "$kt_repeats" >"$out/kernels-pytorch.jsonl" || return 1
  python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
rows = [json.loads(l) for f in ("kernels-lrbench.jsonl", "kernels-pytorch.jsonl") for l in open(f"{out}/{f}") if l.strip()]
sizes = sorted({r["n"] for r in rows})
kernels = list(dict.fromkeys(("lrbench " if "max_score_elements" in r else "PyTorch ") + r["kernel"] for r in rows))
cell = {}
for r in rows:
    k = ("lrbench " if "max_score_elements" in r else "PyTorch ") + r["kernel"]
    if "skipped" in r: cell[k, r["n"]] = "skipped"
    else:
        mem = "" if r.get("peak_bytes") is None else f", {r['peak_bytes'] / 2**20:.0f} MiB"
        cell[k, r["n"]] = f"{r['seconds'] * 1e3:.2f} ms{mem}"
with open(f"{out}/kernels.md", "w") as md:
    md.write("| kernel | " + " | ".join(f"N = {n}" for n in sizes) + " |\n|---|" + "---:|" * len(sizes) + "\n")
    for k in kernels: md.write(f"| {k} | " + " | ".join(cell.get((k, n), "") for n in sizes) + " |\n")
    skipped = {r.get("skipped") for r in rows if "skipped" in r}
    if skipped: md.write("\nSkipped: " + "; ".join(sorted(skipped)) + "\n")
print(open(f"{out}/kernels.md").read())
PY
}
if step kernels_vs_pytorch "lrbench's attention kernels and PyTorch's, forward + backward, N = $kt_sizes on $device" kernel_table; then
  figure kernel_table "kernels.md" "$(grep -c '^| ' "$out/kernels.md") rows; time and peak memory by N"
fi

# ---- 5. MAELRE memory study -----------------------------------------------------------
if step max_batch "MAELRE-$mb_preset largest batch within $mb_budget at N = $mb_lens on $device" \
    "$lrbench" run "$sweeps/max-batch.toml" --out "$out/max-batch"; then
  "$lrbench" report "$out/max-batch" --resamples 1000 --format json -o "$out/max-batch/report.json" >/dev/null 2>&1
  python3 - "$out/max-batch/report.json" >>"$figures" <<'PY' || {
import json, sys
answers = []
for c in json.load(open(sys.argv[1])).get("cells", []):
    eff = c.get("efficiency", {})
    if "max_batch_in_budget" in eff:
        answers.append(eff["max_batch_in_budget"]["median"])
        paper = {2048: "the paper reports 180 (16 GB GPU)", 4096: "the paper reports 90 (16 GB GPU)"}.get(c["seq_len"], "CPU fallback: tests the pipeline, not the paper")
        print(f"max batch at N={c['seq_len']}\t{eff['max_batch_in_budget']['median']:.0f}\t{paper}")
    if "peak_bytes" in eff:
        print(f"peak MiB at N={c['seq_len']}, batch 2\t{eff['peak_bytes']['median'] / 2**20:.1f}\tfrom the run's allocator")
sys.exit(0 if len(answers) == 2 and min(answers) >= 1 else 1)
PY
    printf 'max_batch_answer\tfailed\t0\tno answer, or not even one sample fits the budget\n' >>"$steps"; failed=1
  }
fi

# ---- 6. determinism -------------------------------------------------------------------
same_runs() {
  timeout "$(remaining)" "$lrbench" run "$sweeps/determinism.toml" --out "$out/determinism/a" &&
    timeout "$(remaining)" "$lrbench" run "$sweeps/determinism.toml" --out "$out/determinism/b" || return 1
  local m side
  for m in train_loss eval_loss accuracy; do
    for side in a b; do
      "$lrbench" report "$out/determinism/$side" --metric "$m" --resamples 200 --format json -o "$out/determinism/$side-$m.json" || return 1
    done
  done
  python3 - "$out/determinism" <<'PY'
import json, sys
d, differ, n = sys.argv[1], 0, 0
for m in ("train_loss", "eval_loss", "accuracy"):
    val = lambda side: {(c["model"], json.dumps(c.get("setting"), sort_keys=True), v["seed"]): v["value"]
                        for c in json.load(open(f"{d}/{side}-{m}.json"))["cells"] for v in c["values"]}
    a, b = val("a"), val("b")
    if a.keys() != b.keys(): print(f"{m}: different runs"); differ += 1
    for k in a:
        n += 1
        if a[k] != b.get(k): print(f"{m} {k}: {a[k]!r} != {b.get(k)!r}"); differ += 1
print(f"{n} values compared, {differ} differ")
sys.exit(1 if differ or n == 0 else 0)
PY
}
step determinism "the same sweep twice on $device: per-seed train loss, eval loss and accuracy bit-identical" same_runs
figure determinism "$(tail -1 "$out/determinism.log")" "python float equality of the stored doubles"

# ---- 7. two GPUs ----------------------------------------------------------------------
if [ "$device" = cpu ] || [ "${gpus:-0}" -ge 2 ]; then
  step two_ranks "2 ranks under the prefix's mpirun, one $device each, sharing the determinism sweep's runs" \
    mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 "$lrbench" run "$sweeps/determinism.toml" --out "$out/two-ranks"
else
  not_run two_ranks "one GPU only"
fi
# A data-parallel run: each run of the determinism sweep trained by 2 ranks together
# (ranks_per_run = 2), gradients summed over MPI (host memory) before every step.
if [ "$device" = cpu ] || [ "${gpus:-0}" -ge 2 ]; then
  sed -e 's/name = "device-determinism"/name = "device-data-parallel"\nranks_per_run = 2/' "$sweeps/determinism.toml" >"$sweeps/data-parallel.toml"
  if step data_parallel "one run on 2 ranks (ranks_per_run = 2), one $device each, gradients summed before every step" \
      mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 "$lrbench" run "$sweeps/data-parallel.toml" --out "$out/data-parallel"; then
    "$lrbench" report "$out/data-parallel" --resamples 200 --format json -o "$out/data-parallel/report.json" >/dev/null 2>&1
    python3 - "$out/data-parallel/report.json" >>"$figures" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1])).get("cells", []):
    eff = c.get("efficiency", {})
    if "allreduce_share" in eff:
        print(f"data parallel {c['model']} exchange share\t{eff['allreduce_share']['median']:.3f}\tmedian share of a step spent summing gradients")
PY
  fi
else
  not_run data_parallel "one GPU only"
fi

echo "device_check: done in $(( $(date +%s) - started )) s; failed=$failed"
exit "$failed"
