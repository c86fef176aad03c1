# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The compiler, in-process (lstmc._lstmc: ctypes over liblstmc.so, the C
API with MLIR linked in): verification, IR transformations and compilation
to a library."""
import hashlib
import json
import os
import shutil
import tempfile
import warnings

from . import runtime
from .dsl import CellError

try:
    from . import _lstmc
except ImportError as e:  # e.g. only the runtime was copied somewhere
    _lstmc = None
    _import_error = e

#: Optimisation passes run on the lstm IR before the lowering, by default.
DEFAULT_PRE_PASSES = "lstm-combine-gate-gemms"
# What lstm-to-persistent makes its kernels from: products combined and
# hoisted, one fused pointwise op per step; stacks stay layers at the batch
# sizes the kernels' cost model takes, and become the wavefront above them.
PERSISTENT_PRE_PASSES = "lstm-optimize{persistent=true}"
# The same for a library with gradient functions, whose training stacks the
# wavefront takes only on request (lstm-wavefront's side-output-max-product)
# and whose compile time counts (a training script compiles at its start):
# the wavefront branch of the forward function would add 0.15-0.25 s to a
# char-rnn library's 1.75 s (the 2-core machine).
PERSISTENT_TRAIN_PRE_PASSES = "lstm-optimize{wavefront=false}"
# A GPU library with gradient functions and no persistent kernels: the
# stacks' training forward and their backward as wavefronts (both off in
# lstm-optimize by default, as on the CPU the forward's layers measured
# faster), what bench/compile_train.sh compiles for the training figures of
# docs/training-gpu.md.
GPU_TRAIN_PRE_PASSES = "lstm-optimize{side-output-max-product=268435456 product-links=true}"


def _complete_pre_passes(pre_passes, target, gradients, persistent):
    """The defaults (lstmc's, and torch_module's lstm-optimize) give way to
    the form for the target: the persistent kernels' (lstm-optimize's
    wavefront would leave no single layer to run persistently at any batch
    size), or on the GPU with gradients the training wavefronts'."""
    if pre_passes not in (DEFAULT_PRE_PASSES, "lstm-optimize"):
        return pre_passes
    if persistent:
        return PERSISTENT_TRAIN_PRE_PASSES if gradients else PERSISTENT_PRE_PASSES
    if target == "cuda" and gradients:
        return GPU_TRAIN_PRE_PASSES
    return pre_passes


def _native():
    if _lstmc is None:
        raise ImportError("the lstm compiler (lstmc._lstmc) is not available: "
                          f"{_import_error}; lstmc.load() still runs saved networks")
    return _lstmc


def CompilerError():
    return _native().CompilerError


def verify(ir):
    """Parses and verifies lstm IR; a failure raises CellError with the
    compiler's diagnostics."""
    native = _native()
    try:
        native.verify(ir)
    except native.CompilerError as e:
        raise CellError(f"the cell does not type-check in the compiler: {e}") from None


def transform(ir, pipeline):
    """Runs a textual pass pipeline on builtin.module, returns the new IR."""
    return _native().transform(ir, pipeline)


def canonicalize(ir):
    return transform(ir, "canonicalize")


def _type_shape(t):
    """('?x?x128xf32' of a tensor type) -> (shape with None for '?', dtype name)."""
    dims = t.split("x")
    names = {"f32": "float32", "f64": "float64", "i32": "int32"}
    return [None if d == "?" else int(d) for d in dims[:-1]], names[dims[-1]]


def _result_types(ir, name):
    """The result types of func.func @name in printed IR, as _type_shape."""
    import re
    m = re.search(r"func\.func @" + re.escape(name) + r"\(", ir)
    i, depth = m.end(), 1
    while depth:
        depth += {"(": 1, ")": -1}.get(ir[i], 0)
        i += 1
    head = ir[i:ir.index("{", i)]
    return [_type_shape(t) for t in re.findall(r"tensor<([^>]*)>", head)]


def schedule_report(network, target="cpu", pre_passes=DEFAULT_PRE_PASSES, gradients=False,
                    persistent=False, chip=None, persistent_tensor_cores=True):
    """What compiling `network` with these options would schedule, as the
    text of lstm-schedule-report (docs/passes.md): a line per layer (or per
    wavefront) of each function with its products and kernels per step
    and, with `persistent` (target 'cuda'), up to which batch the layer
    runs as a persistent kernel (`persistent=B<=M`, or `no (why)`), from
    which batch on tensor cores (`tensor-cores=B>=N (3xtf32|tf32|bf16)`, as
    for the network's compute_type on `chip`) and which layers share one
    kernel (`stack=I-J`). The options mean what they mean to compile(), and
    pre_passes is completed the same way (the defaults take the persistent
    form, or on the GPU with gradients the training wavefronts'; with
    gradients, lstm-differentiate first). Nothing is compiled."""
    if target not in ("cpu", "cuda"):
        raise ValueError(f"target {target!r}: expected 'cpu' or 'cuda'")
    if not isinstance(pre_passes, str):
        raise TypeError(f"pre_passes={pre_passes!r}: expected a string ('' for no pre-passes)")
    if gradients not in (True, False, "train"):
        raise ValueError(f"gradients={gradients!r}: expected True, False or 'train'")
    if persistent and target != "cuda":
        raise ValueError("persistent=True: persistent kernels need target='cuda'")
    if not isinstance(persistent_tensor_cores, bool):
        raise ValueError(f"persistent_tensor_cores={persistent_tensor_cores!r}: "
                         "expected True or False")
    if chip is not None and not isinstance(chip, str):
        raise TypeError(f"chip={chip!r}: expected a string or None (the default)")
    native = _native()
    chip = native.default_options()["chip"] if not chip else chip
    # The chip goes into the pass options as a bare word.
    if not chip.replace("_", "").isalnum():
        raise ValueError(f"chip={chip!r}: expected a GPU architecture such as 'sm_90'")
    pre_passes = _complete_pre_passes(pre_passes, target, gradients, persistent)
    passes = []
    if gradients:
        train = "true" if gradients == "train" else "false"
        passes.append("lstm-combine-gate-gemms")
        passes.append(f"lstm-differentiate{{grad-function={'false' if gradients == 'train' else 'true'} "
                      f"forward-through-train={train}}}")
    if pre_passes:
        passes.append(pre_passes)
    directory = tempfile.mkdtemp(prefix="lstmc-report-")
    try:
        report = os.path.join(directory, "report.txt")
        passes.append(f"lstm-schedule-report{{output-file=\"{report}\" "
                      f"persistent={'true' if persistent else 'false'} "
                      f"compute-type={network.compute_type} chip={chip} "
                      f"tensor-cores={'true' if persistent_tensor_cores else 'false'}}}")
        try:
            native.transform(network.ir, ",".join(passes))
        except native.CompilerError as e:
            raise RuntimeError(str(e)) from None
        with open(report) as f:
            return f.read()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def gradient_functions(network):
    """The signatures of the gradient functions lstm-differentiate adds to
    `network` (its entry f): {'grad': ..., 'train': ..., 'backward': ...},
    each {'entry', 'args', 'results'} as the compiled network's metadata has
    them. Cotangent arguments (kind 'cotangent') are named d<result>, the
    gradients d<argument>, the saved activations (kind 'saved', [T, B, N])
    saved0, saved1, ..."""
    from .network import Arg
    ir = transform(network.ir, "lstm-combine-gate-gemms,lstm-differentiate")
    f = network.entry
    cots = [Arg("d" + r.name, r.shape, r.dtype, "cotangent") for r in network.results]
    grads = [Arg("d" + a.name, a.shape, a.dtype, "result") for a in network.args
             if a.dtype.startswith("float")]
    trained = _result_types(ir, f + "_train")
    saved = []
    for k, (shape, dtype) in enumerate(trained[len(network.results):]):
        dims = tuple(("T", "B")[i] if d is None and i < 2 else d for i, d in enumerate(shape))
        saved.append(Arg(f"saved{k}", dims, dtype, "saved"))
    results = [Arg(r.name, r.shape, r.dtype, "forward_result") for r in network.results]
    meta = lambda name, args, res: {"entry": f + "_" + name,
                                    "args": [a.to_json() for a in args],
                                    "results": [r.to_json() for r in res]}
    return {"grad": meta("grad", network.args + cots, grads),
            "train": meta("train", network.args, network.results + saved),
            "backward": meta("backward", network.args + results + saved + cots, grads)}


#: The layout of a compile cache entry; part of every key, so that a change
#: of it never reads an older entry.
_CACHE_FORMAT = 1


def _cache_root(cache_dir):
    """The compile cache's directory: `cache_dir`, else $LSTMC_CACHE_DIR;
    None (no cache) for False or where neither is set."""
    if cache_dir is False:
        return None
    if cache_dir is None or cache_dir is True:
        env = os.environ.get("LSTMC_CACHE_DIR")
        if not env:
            if cache_dir is True:
                raise ValueError("cache_dir=True: $LSTMC_CACHE_DIR is not set; "
                                 "give the cache's directory")
            return None
        return env
    if not isinstance(cache_dir, (str, os.PathLike)) or not os.fspath(cache_dir):
        raise ValueError(f"cache_dir={cache_dir!r}: expected a directory, True "
                         "($LSTMC_CACHE_DIR), False or None")
    return os.fspath(cache_dir)


def _cache_key(compiler_library, fields):
    """The entry of a compile: a hash of everything the library depends on,
    the compiler itself included (its library's size and modification time:
    reinstalling lstmc gives new keys) and the CUDA toolkit the environment
    names (its ptxas makes the kernels)."""
    stat = os.stat(compiler_library)
    identity = {"format": _CACHE_FORMAT, "compiler": [os.path.realpath(compiler_library),
                                                      stat.st_size, stat.st_mtime_ns],
                "cuda_env": [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]}
    text = json.dumps([identity, fields], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _cached(root, key):
    """The network of cache entry `key`, or None (absent, or unreadable: the
    entry is then dropped, with a warning, and compiled again)."""
    entry = os.path.join(root, key)
    if not os.path.isfile(os.path.join(entry, runtime.META)):
        return None
    try:
        network = runtime.load(entry)
    except (OSError, ValueError, KeyError) as e:
        warnings.warn(f"lstmc: compile cache entry {entry} cannot be loaded ({e}); "
                      "compiling again", RuntimeWarning, stacklevel=3)
        shutil.rmtree(entry, ignore_errors=True)
        return None
    network.from_cache = True
    return network


def default_options():
    """The compiler's defaults, from the compiler itself (one source of
    truth with lstm-compile and the C API): a dict with 'target', 'chip',
    'features' and 'compute_type'."""
    return dict(_native().default_options())


def compile(network, path=None, target="cpu", pre_passes=DEFAULT_PRE_PASSES, chip=None,
            features=None, cuda_path="", cuda_lib_dir="", runtime_lib_dir=None,
            gradients=False, persistent=False, chunk_bytes=None, hoist_min_threads=None,
            split_batch=True, cache_dir=None, per_step_fallback="on-demand",
            persistent_tensor_cores=True, persistent_split_depth=None,
            split_tf32_gemms=True):
    """Compiles `network` (a Network, or lstm IR text with a signature given
    by a Network) into a directory `path` (a temporary one by default) and
    loads it.

    target: 'cpu' or 'cuda'. pre_passes: the optimisation pipeline on the
    lstm IR (a textual pipeline; '' for none). chip, features, cuda_path,
    cuda_lib_dir: as lstm-compile's options; chip and features default to
    the compiler's (default_options()). gradients: also compile the
    gradient functions of lstm-differentiate, as the returned network's
    `grad`, `train` and `backward` (see docs/training.md); "train": only
    `train` and `backward`, what a training step calls, and the network's
    own function a call of `train` that drops the saved activations (the
    recurrence compiled twice instead of three times; inference then stores
    the activations a training step saves; lstmc.torch_module asks for
    this). persistent
    (cuda; the kernels compute in fp32 under every compute_type, with
    their products' operands rounded to bf16 under 'bf16'): each layer that
    lstm-to-persistent handles runs its whole
    sequence as one persistent kernel where the cost model expects it to
    be faster (docs/passes.md); with the default pre_passes or
    'lstm-optimize' it takes 'lstm-optimize{persistent=true}', the form the
    kernels are made from, with stacks as the wavefront at the batch sizes
    the kernels' cost model gives up on; with gradients
    'lstm-optimize{wavefront=false}' (no wavefront branch: it costs
    compile time)
    (lstmc.torch_module(..., persistent=True) passes it on). Without
    persistent, target 'cuda' with gradients takes
    'lstm-optimize{side-output-max-product=268435456 product-links=true}'
    for those pre_passes: the stacks' training forward and backward as
    wavefronts (GPU_TRAIN_PRE_PASSES; docs/training.md).
    per_step_fallback (with persistent): the per-step lowering of each
    layer beside its kernel, for the batches above the kernel's bound and
    the GPUs with fewer SMs (or less shared memory a block) than it needs.
    "on-demand" (the default): the library is compiled without it (about a
    quarter less compile time: char-rnn's training library) and the first
    call that needs it compiles the complete library, in this process, and
    uses it from then on (the network, its gradient functions and their
    bound copies alike; a call of lstmc.torch_module's inside a CUDA graph
    capture cannot: it raises, asking for a warm-up call before the
    capture); True: compiled in; False: left out, a call that needs it
    raising RuntimeError. A network loaded with lstmc.load has no compiler
    at hand: one saved without the fallback raises.
    persistent_tensor_cores (with persistent): the kernels' products on
    tensor cores (sm_80 and later) from the batch the cost model starts
    them at: TF32 or bf16 operands under 'tf32' and 'bf16', 3xTF32 (each
    operand split into two TF32 values, as exact as fp32 multiply-adds)
    under 'fp32'; False keeps fp32 multiply-adds at every batch (one
    kernel a layer: a shorter compile).
    persistent_split_depth (with persistent tensor cores): how many warps
    split each tile's depth, lstm-compile's --persistent-split-depth: None
    (the default) chosen; 0 only where a warp's weights would not fit its
    registers otherwise; 1 (none), 2, 4, 8, 16 or 32.
    split_tf32_gemms (cuda, compute_type 'fp32'): a sequence's products
    (the hoisted input projections, the backward's products through the
    weights, the weight gradients) on TF32 tensor cores, each operand split
    into two TF32 values (3xTF32, within fp32's tolerance; the deep ones in
    parts of at most 2048 terms added in fp32), where they have at least
    128 rows, columns and terms (lstm-split-tf32-gemms; the default);
    False keeps fp32 multiply-adds.
    chunk_bytes (cpu): each hoisted input projection is computed this many
    bytes of steps a thread at a time, just before those steps, while they
    are in cache (lstm-chunk-hoisted-projections; 0 or None: whole, the
    default; docs/benchmarks.md measures 2**20).
    hoist_min_threads (cpu): the least number of threads (set_threads, at
    run time) that runs the hoisted input projections hoisted; with fewer
    the layers compute them in their steps, which measured 5-11% faster on
    one thread and 0-3% on two (lstm-hoist-by-threads; None: the
    compiler's default, 3; 1: always hoisted). Applies where the pre_passes
    hoist (lstm-optimize).
    split_batch (cpu): each layer whose rows are independent runs on parts
    of its batch, a thread each, for the whole sequence (lstm-split-batch;
    the default); False keeps each batch whole, its products and cells
    split among the threads at every step.
    cache_dir: a directory where compiled networks are kept and found again
    by what they were compiled from (the IR, every option, the compiler's
    own library): a compile that is there loads instead (its network's
    `from_cache` is True). None: $LSTMC_CACHE_DIR if set (not with `path`),
    else no cache; False: no cache.
    Returns a CompiledNetwork."""
    if target not in ("cpu", "cuda"):
        raise ValueError(f"target {target!r}: expected 'cpu' or 'cuda'")
    # Strings the native compiler takes as they are: anything else would
    # fail there without naming the argument.
    for name, value in (("pre_passes", pre_passes), ("cuda_path", cuda_path),
                        ("cuda_lib_dir", cuda_lib_dir)):
        if not isinstance(value, str):
            raise TypeError(f"{name}={value!r}: expected a string ('' for "
                            f"{'no pre-passes' if name == 'pre_passes' else 'the default'})")
    for name, value in (("chip", chip), ("features", features),
                        ("runtime_lib_dir", runtime_lib_dir)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name}={value!r}: expected a string or None (the default)")
    if gradients not in (True, False, "train"):
        raise ValueError(f"gradients={gradients!r}: expected True, False or 'train'")
    if persistent and target != "cuda":
        raise ValueError("persistent=True: persistent kernels need target='cuda'")
    if chunk_bytes is not None:
        if isinstance(chunk_bytes, bool) or not isinstance(chunk_bytes, int) or chunk_bytes < 0:
            raise ValueError(f"chunk_bytes={chunk_bytes!r}: expected an int >= 0 "
                             "(0: whole projections) or None")
        if chunk_bytes > 2 ** 63 - 1:
            raise ValueError(f"chunk_bytes={chunk_bytes} does not fit a 64-bit int")
        if target != "cpu":
            raise ValueError("chunk_bytes applies to target='cpu' only")
    if hoist_min_threads is not None:
        if (isinstance(hoist_min_threads, bool) or not isinstance(hoist_min_threads, int)
                or not 1 <= hoist_min_threads <= 2 ** 31 - 1):
            raise ValueError(f"hoist_min_threads={hoist_min_threads!r}: expected an int "
                             ">= 1 (1: always hoisted) or None")
        if target != "cpu":
            raise ValueError("hoist_min_threads applies to target='cpu' only")
    if not (isinstance(per_step_fallback, bool) or per_step_fallback == "on-demand"):
        raise ValueError(f"per_step_fallback={per_step_fallback!r}: expected 'on-demand', "
                         "True or False")
    if not isinstance(persistent_tensor_cores, bool):
        raise ValueError(f"persistent_tensor_cores={persistent_tensor_cores!r}: "
                         "expected True or False")
    if not persistent_tensor_cores and not persistent:
        raise ValueError("persistent_tensor_cores=False applies with persistent=True")
    if persistent_split_depth is not None:
        if (isinstance(persistent_split_depth, bool) or not isinstance(persistent_split_depth, int)
                or persistent_split_depth not in (0, 1, 2, 4, 8, 16, 32)):
            raise ValueError(f"persistent_split_depth={persistent_split_depth!r}: expected "
                             "None (chosen), 0 (to fit) or 1, 2, 4, 8, 16 or 32 warps")
        if not persistent or not persistent_tensor_cores:
            raise ValueError("persistent_split_depth applies with persistent=True and "
                             "persistent_tensor_cores=True")
    if not isinstance(split_tf32_gemms, bool):
        raise ValueError(f"split_tf32_gemms={split_tf32_gemms!r}: expected True or False")
    if not split_tf32_gemms and (target != "cuda" or network.compute_type != "fp32"):
        raise ValueError("split_tf32_gemms=False applies to target='cuda' under "
                         "compute_type 'fp32'")
    # What the library is compiled with: the fallback is left out only
    # beside persistent kernels.
    compiled_fallback = per_step_fallback is True or not persistent
    if not isinstance(split_batch, bool):
        raise ValueError(f"split_batch={split_batch!r}: expected True or False")
    if not split_batch and target != "cpu":
        raise ValueError("split_batch applies to target='cpu' only")
    pre_passes = _complete_pre_passes(pre_passes, target, gradients, persistent)
    # A directory asked for is where the network goes; $LSTMC_CACHE_DIR
    # does not override it.
    if path is not None and cache_dir not in (None, False):
        raise ValueError("path and cache_dir: give one (the cache chooses the directory)")
    cache_root = _cache_root(False if path is not None else cache_dir)
    native = _native()
    defaults = native.default_options()
    chip = defaults["chip"] if chip is None else chip
    features = defaults["features"] if features is None else features
    verify(network.ir)

    def _with_fallback(compiled):
        # The complete library, compiled on the first call that needs it
        # with the same options (and the same cache; a directory of its own
        # where `path` named this one's).
        if not compiled_fallback and per_step_fallback == "on-demand":
            compiled._attach_per_step_fallback(runtime.PerStepFallback(lambda: compile(
                network, target=target, pre_passes=pre_passes, chip=chip, features=features,
                cuda_path=cuda_path, cuda_lib_dir=cuda_lib_dir,
                runtime_lib_dir=runtime_lib_dir, gradients=gradients, persistent=persistent,
                chunk_bytes=chunk_bytes, hoist_min_threads=hoist_min_threads,
                split_batch=split_batch, cache_dir=False if path_given else cache_dir,
                per_step_fallback=True, persistent_tensor_cores=persistent_tensor_cores,
                persistent_split_depth=persistent_split_depth,
                split_tf32_gemms=split_tf32_gemms)))
        return compiled

    path_given = path is not None
    key = None
    if cache_root is not None:
        key = _cache_key(native.LIBRARY, {
            "ir": network.ir, "entry": network.entry, "dtype": network.dtype,
            "args": [a.to_json() for a in network.args],
            "results": [a.to_json() for a in network.results],
            "target": target, "chip": chip, "features": features, "cuda_path": cuda_path,
            "cuda_lib_dir": cuda_lib_dir, "runtime_lib_dir": runtime_lib_dir,
            "pre_passes": pre_passes, "compute_type": network.compute_type,
            "gradients": gradients, "persistent": persistent, "chunk_bytes": chunk_bytes,
            "hoist_min_threads": hoist_min_threads, "split_batch": split_batch,
            "per_step_fallback": compiled_fallback,
            "persistent_tensor_cores": persistent_tensor_cores,
            "persistent_split_depth": persistent_split_depth,
            "split_tf32_gemms": split_tf32_gemms})
        found = _cached(cache_root, key)
        if found is not None:
            return _with_fallback(found)
        os.makedirs(cache_root, exist_ok=True)
        # Compiled beside the entry and renamed into place once whole: a
        # reader never sees half an entry, and of two processes compiling
        # the same network the second keeps the first's.
        path = tempfile.mkdtemp(prefix=".compiling-", dir=cache_root)
    tmp = None
    if path is None:
        tmp = path = tempfile.mkdtemp(prefix="lstmc-")
    os.makedirs(path, exist_ok=True)
    try:
        _compile_into(native, network, path, target=target, chip=chip, features=features,
                      cuda_path=cuda_path, cuda_lib_dir=cuda_lib_dir,
                      runtime_lib_dir=runtime_lib_dir, pre_passes=pre_passes,
                      gradients=gradients, persistent=persistent, chunk_bytes=chunk_bytes,
                      hoist_min_threads=hoist_min_threads, split_batch=split_batch,
                      per_step_fallback=compiled_fallback,
                      persistent_tensor_cores=persistent_tensor_cores,
                      persistent_split_depth=persistent_split_depth,
                      split_tf32_gemms=split_tf32_gemms)
    except BaseException:
        # Nothing half-made stays in the cache or the temporary directory
        # (a failed compile, an interrupt); a directory the caller named
        # keeps what it had.
        if key is not None or tmp is not None:
            shutil.rmtree(path, ignore_errors=True)
        raise
    if key is not None:
        entry = os.path.join(cache_root, key)
        try:
            os.rename(path, entry)
        except OSError:
            # Another process made the entry meanwhile.
            shutil.rmtree(path, ignore_errors=True)
            found = _cached(cache_root, key)
            if found is None:
                raise
            return _with_fallback(found)
        return _with_fallback(runtime.CompiledNetwork(entry))
    return _with_fallback(runtime.CompiledNetwork(path, _owned_tmp=tmp))


def _compile_into(native, network, path, target, chip, features, cuda_path, cuda_lib_dir,
                  runtime_lib_dir, pre_passes, gradients, persistent, chunk_bytes,
                  hoist_min_threads, split_batch, per_step_fallback,
                  persistent_tensor_cores, persistent_split_depth, split_tf32_gemms):
    """The library and its description (runtime.META) in directory `path`."""
    try:
        native.compile(network.ir, os.path.join(path, runtime.LIBRARY), target=target,
                       chip=chip, features=features, cuda_path=cuda_path,
                       cuda_lib_dir=cuda_lib_dir, runtime_lib_dir=runtime_lib_dir,
                       pre_passes=pre_passes, compute_type=network.compute_type,
                       gradients=gradients, persistent=persistent, chunk_bytes=chunk_bytes,
                       hoist_min_threads=hoist_min_threads, split_batch=split_batch,
                       per_step_fallback=per_step_fallback,
                       persistent_tensor_cores=persistent_tensor_cores,
                       persistent_split_depth=persistent_split_depth,
                       split_tf32_gemms=split_tf32_gemms)
    except native.CompilerError as e:
        raise RuntimeError(str(e)) from None
    meta = {"entry": network.entry, "target": target, "dtype": network.dtype,
            "pre_passes": pre_passes, "compute_type": network.compute_type,
            "persistent": persistent, "per_step_fallback": per_step_fallback,
            "persistent_tensor_cores": persistent_tensor_cores,
            "persistent_split_depth": persistent_split_depth,
            "split_tf32_gemms": split_tf32_gemms,
            "chunk_bytes": chunk_bytes,
            "hoist_min_threads": hoist_min_threads, "split_batch": split_batch,
            "chip": chip if target == "cuda" else None,
            "args": [a.to_json() for a in network.args],
            "results": [a.to_json() for a in network.results], "ir": network.ir}
    if gradients:
        functions = gradient_functions(network)
        if gradients == "train":
            del functions["grad"]
        meta["functions"] = functions
    with open(os.path.join(path, runtime.META), "w") as f:
        json.dump(meta, f, indent=1)
