# -*- Python -*-
# lit configuration of the lstm compiler's tests.

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "LSTM"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".c"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.lstm_obj_root, "test")

llvm_config.use_default_substitutions()
llvm_config.with_system_environment(["HOME", "PATH", "TMPDIR", "LSTM_FUZZ_SEED",
                                    "LSTM_FUZZ_BUDGET"])
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.lstm_tools_dir, append_path=True)

tool_dirs = [config.lstm_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["lstm-opt", "lstm-run", "lstm-compile", "lstm-capi-test", "lstm-capi-compiler-test", "lstm-capi-text-test", "lstm-cpu-runtime-test", "lstm-cpu-runtime-blocks-test", "not", "FileCheck", "count", "split-file"], tool_dirs)

# %-prefixed names go first: the tool substitution of `lstm-run` would
# otherwise rewrite the tail of `%lstm-run`.
config.substitutions.insert(
    0, ("%lstm-run", os.path.join(config.lstm_tools_dir, "lstm-run")))
config.substitutions.insert(
    0, ("%lstm-opt", os.path.join(config.lstm_tools_dir, "lstm-opt")))
# The Python that CMake found (and pip installed numpy into), not the one
# that happens to run lit.
config.substitutions.insert(0, ("%python", config.python_executable))
config.substitutions.insert(0, ("%lstm_obj_root", config.lstm_obj_root))
config.substitutions.insert(0, ("%lstm_src_root", config.lstm_src_root))
config.substitutions.insert(
    0, ("%examples", os.path.join(config.lstm_src_root, "examples")))
# Debian's own mlir-opt (not lstm-opt), and the plugin that teaches it the
# lstm dialect, passes and pipelines (test/Plugin).
config.substitutions.insert(
    0, ("%mlir_opt", os.path.join(config.llvm_tools_dir, "mlir-opt")))
config.substitutions.insert(0, ("%lstm_plugin", config.lstm_plugin))
# The CMake that configured the build (test/Embed installs with it).
config.substitutions.insert(0, ("%cmake", config.cmake_executable))


# The host's architecture (tests that name x86 CPUs for --host-cpu).
import platform
if platform.machine() in ("x86_64", "AMD64"):
    config.available_features.add("x86_64")

# The sanitizer build (LSTM_ENABLE_SANITIZERS, docs/testing.md).
if config.lstm_sanitizers.upper() in ("ON", "1", "TRUE", "YES", "Y"):
    config.available_features.add("asan")
    # detect_leaks=0: LLVM and MLIR keep their registries, options and
    #   contexts' storage alive to the end of the process by design, and the
    #   uninstrumented Debian libraries' allocations cannot be told apart.
    # allocator_may_return_null=1: a malloc too large for the process must
    #   return null, as without ASan: the runner and the generated code
    #   check for it (test/Runner/sizes.test asks for 400 TB).
    # Reports go to LSTM_SANITIZER_LOG (a path prefix) when it is set, so
    #   that scripts/sanitize.sh finds one even under `not` (a RUN line that
    #   expects the tool to fail).
    log = os.environ.get("LSTM_SANITIZER_LOG")
    asan = ["detect_leaks=0", "allocator_may_return_null=1", "abort_on_error=0"]
    ubsan = ["print_stacktrace=1", "halt_on_error=1"]
    if log:
        asan.append("log_path=" + log + ".asan")
        ubsan.append("log_path=" + log + ".ubsan")
    config.environment["ASAN_OPTIONS"] = ":".join(asan)
    config.environment["UBSAN_OPTIONS"] = ":".join(ubsan)
    # The fuzzers set no address-space limit: ASan's shadow needs terabytes.
    config.environment["LSTM_FUZZ_SANITIZED"] = "1"
    # Debian's mlir-opt is not instrumented: with our plugin loaded, the ASan
    # runtime must come first.
    libasan = subprocess.run(["gcc", "-print-file-name=libasan.so"],
                             capture_output=True, text=True).stdout.strip()
    config.substitutions.insert(0, ("%mlir_opt", "env LD_PRELOAD=" + libasan + " "
                                    + os.path.join(config.llvm_tools_dir, "mlir-opt")))

# lstm-opt with the test passes of test/lib (LSTM_INCLUDE_TESTS).
if config.lstm_include_tests.upper() in ("ON", "1", "TRUE", "YES", "Y"):
    config.available_features.add("lstm-test-passes")


def cuda_gpu_count():
    """The usable NVIDIA GPUs: the devices nvidia-smi lists."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return 0
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    if out.returncode != 0:
        return 0
    return sum(line.startswith("GPU ") for line in out.stdout.splitlines())


def python_has(module):
    """Whether the tests' Python can import `module`."""
    return subprocess.run([config.python_executable, "-c", "import " + module],
                          capture_output=True).returncode == 0


if python_has("torch"):
    config.available_features.add("torch")

if shutil.which("compute-sanitizer"):
    config.available_features.add("compute-sanitizer")

gpus = cuda_gpu_count()
if gpus >= 1:
    config.available_features.add("cuda-gpu")
if gpus >= 2:
    config.available_features.add("cuda-multi-gpu")

# The toolkit's libcuda.so stub loads without a GPU (each call fails): tests
# of lstm-run --device=cuda up to the device check (test/Runner).
if config.cuda_stubs_dir and os.path.exists(
        os.path.join(config.cuda_stubs_dir, "libcuda.so")):
    config.available_features.add("cuda-driver-stub")
    config.substitutions.insert(0, ("%cuda_stubs_dir", config.cuda_stubs_dir))
