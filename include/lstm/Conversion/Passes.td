//===- Passes.td - Conversions out of the lstm dialect -----*- tablegen -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_CONVERSION_PASSES_TD
#define LSTM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertLSTMToLinalgPass : Pass<"convert-lstm-to-linalg", "ModuleOp"> {
  let summary = "Lower lstm layers to scf.for over time and gates to linalg";
  let description = [{
    Rewrites every `lstm.layer` into an `scf.for` over the time steps whose
    body is the inlined cell: the loop carries the recurrent state and the
    stacked output sequences, reads the step slice of each input with
    `tensor.extract_slice` and writes each output with `tensor.insert_slice`.
    Reverse layers index the sequences from the end. With per-sequence
    lengths, rows past their length keep their state and write zeros.

    Every `lstm.gate` becomes one `linalg.generic` contraction per matrix
    product followed by one `linalg.generic` for biases, peephole and
    activation; `lstm.one_minus` becomes a `linalg.generic`. Every
    `lstm.pointwise` (the fused pointwise work of a step, from
    `lstm-fuse-elementwise`) becomes exactly one `linalg.generic` over
    `[B, N]` whose body is the op's region: rank-2 operands are read at
    `(b, n)`, rank-1 operands at `(n)`.

    Extents that are only known at run time (batch size, sequence length,
    dynamic weight shapes) are compared with `cf.assert` where the op needs
    them equal, so that a mismatched call stops with a message instead of
    reading out of bounds.

    A layer whose sequence length or batch is statically 0 runs no step:
    it becomes empty outputs and its initial states as finals (after the
    same checks); a `tensor.concat` with a static extent of 0 (the outputs of
    such a bidirectional layer) becomes a `tensor.empty`. A `tensor.dim` whose
    constant index is not a dimension of its operand is an error (upstream's
    folders of the `memref.dim` it becomes read the shape at that index). A tensor of the module whose static size in bytes does not
    fit in 63 bits is an error naming it (argument, or op result).

    The result is pure upstream IR (tensor, linalg, scf, arith, math, and
    `bufferization.alloc_tensor` for the sequences a time loop fills, one
    buffer each): it feeds one-shot bufferization and either the CPU or the
    GPU lowering.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def FusePointwiseGenericsPass : Pass<"lstm-fuse-pointwise-generics"> {
  let summary = "Fuse the pointwise linalg.generics of a step, leaving "
                "contractions alone";
  let description = [{
    Upstream's `linalg-fuse-elementwise-ops` with one more condition: a
    producer is fused only into a consumer whose loops are all parallel.
    Upstream's pass also fuses a pointwise producer into a contraction (the
    GEMM of Cho's GRU, `R_n (r ⊙ h)`) as soon as the producer has no other
    use, which recomputes the producer once per reduction step and turns
    a GEMM that cuBLAS would run into a generated kernel. Runs in
    `lstm-to-cpu` and `lstm-to-nvvm` after the lowering to linalg.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AccumulateIntoProductsPass : Pass<"lstm-accumulate-into-products"> {
  let summary = "Start a product that a pointwise op adds last from the "
                "rest of that op's sum";
  let description = [{
    A `linalg.generic` whose loops are all parallel and whose one result is
    `x + P` (the sum at the root of its body), where `P` is the result of a
    contraction into zeros (`linalg.fill`) that only this op reads, becomes
    two ops: a generic that computes `x` alone, then the contraction
    accumulating into that instead of into zeros. The GEMM call then adds
    its product to what is there (beta = 1) and the sum needs no loop or
    kernel of its own; the generic that computes `x` runs before the
    product, beside the pointwise work that precedes it, and
    `lstm-merge-gpu-launches` can put both in one launch.

    Cho's GRU's backward step ends so: `dh_{t-1} = dh ⊙ z + (R_nᵀ dn) ⊙ r
    + [R_z R_r]ᵀ [dz dr]`, whose last product otherwise needed a kernel of
    its own after it.

    Only `x + P` or `P + x` at the root (the floating-point sum is
    commutative, not associative: a product inside a longer sum,
    `(P + a) + b`, is left alone), `P` read once in the body, through the
    op's identity indexing map of the result's shape, and `x` not a plain
    operand (a copy would replace the sum: products summed with products
    are `lstm-concat-summed-products`' work). A GEMM call adds `x` to the
    finished product, as the sum did (the same rounding); a product left
    as a loop nest (under the `cublas-min-size` / `blas-min-size` bound)
    adds its terms onto `x` one by one, the same terms in another order.
    The contraction moves down to where the sum was, after the generic
    that now feeds it. Runs in `lstm-to-cpu` and `lstm-to-nvvm` after the
    pointwise fusion.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ReadOnlyArgumentsPass
    : Pass<"lstm-read-only-arguments", "::mlir::func::FuncOp"> {
  let summary = "Mark the tensor arguments of public functions read-only for bufferization";
  let description = [{
    Sets `bufferization.writable = false` on every tensor argument of a
    public function. One-shot bufferization otherwise takes function
    arguments as writable and may update them in place: a gradient function
    that clears part of a cotangent it was passed (the adjoint of
    `tensor.insert_slice`) would then overwrite the caller's array. The
    caller owns what it passes; with this, bufferization copies instead.
    Both lowerings run it before bufferizing.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def ElideCopiesPass : Pass<"lstm-elide-copies", "::mlir::func::FuncOp"> {
  let summary = "Write buffers where they are copied to, instead of copying them";
  let description = [{
    After one-shot bufferization, a value that is computed into a buffer of
    its own and then copied into part of another (`memref.copy %tmp,
    %view`) costs a copy, and on the GPU a kernel: the fused backward step
    of a combined cell computes each gate's `dz` and copies it into its
    columns of the `[B, G·H]` operand of the recurrent GEMM.
    (`eliminate-empty-tensors` avoids such copies at tensor level only when
    the destination of the insert is defined before the computation, which
    a chain of inserts defeats.)

    This pass makes the computing ops write the destination directly and
    drops the copy, when that cannot change what any op reads. Two forms:

    - a part: the copied buffer is a view of a `memref.alloc` that nothing
      but one producer and the copy uses, the producer a linalg op that
      overwrites it as an output without reading it. The destination view
      is made before the producer and becomes its output;
    - a whole temporary: the copied buffer is a `memref.alloc` used (through
      subviews) only by linalg ops and copies in the copy's block. The
      destination view is made where the buffer was allocated and replaces
      it, subviews rebuilt on it.

    In both, the destination's operands must be available there, the ops
    involved must not touch the destination's underlying buffer otherwise
    (but in disjoint views: in some dimension, ranges of constant sizes
    whose offsets are constants or one value plus constants, as rows `t`
    and `t + 1` of a stacked state), and nothing else may read or write it
    from the producer (the allocation) to the copy (the last use), except
    copies into disjoint views of it (from disjoint views of it too: a part
    copied onto itself, as a chain of inserts into the parts of one empty
    tensor leaves it).

    Run it right after bufferization, before buffer deallocation.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def GenerateRuntimeChecksPass
    : Pass<"lstm-generate-runtime-checks", "::mlir::func::FuncOp"> {
  let summary = "Check at run time the extents that the function's tensor "
                "ops need to agree";
  let description = [{
    The first pass of `lstm-to-cpu` and `lstm-to-nvvm`: it sees the IR after
    whatever passes ran before the lowering (`lstm-optimize`, say), and
    makes the generated code check, when the function is called, what the
    verifiers could not check statically because an extent is dynamic:

    - the ops with upstream's `RuntimeVerifiableOpInterface` (a
      `tensor.extract_slice` or `tensor.insert_slice` within bounds, a
      `tensor.cast` to a static extent, a `tensor.dim` or `tensor.extract`
      index, a linalg op's operands agreeing with its loop ranges), with
      upstream's checks;
    - elementwise ops on tensors (`arith.mulf` of two `[B, H]` tensors,
      say): every operand and result has the same extents;
    - `tensor.concat`: the operands agree in every dimension but the
      concatenated one;
    - `tensor.expand_shape`: the output shape's product in each group is
      the source's extent;
    - `tensor.empty` with dynamic extents: its size in bytes fits in 63 bits
      (the buffer it becomes would otherwise be allocated with a size that
      wrapped around).

    One thing it rejects at compile time: a slice's static offset that no
    tensor of the sliced type can hold in bounds (its byte offset alone
    does not fit in 63 bits), which the lowering would overflow on.

    Each check stops the run with a message naming the op, its source
    location and, where the op reads an argument of the function directly,
    that argument (its number and where it is declared), e.g. a stack whose
    `c0` has a smaller batch than the `h0` its slices are sized by:

        run-time check failed: tensor.extract_slice at stack3.mlir:55:12: extract_slice runs out-of-bounds along dimension 1 (operand #0 is argument #2 of @forward, declared at stack3.mlir:37:5)

    The `lstm` ops are checked by their lowering (`convert-lstm-to-linalg`)
    and the rewrites of `lstm-optimize` check what they take from them
    (`lstm-wavefront` the batch of each layer's initial state). Checks of
    static extents fold away; the others are a few integer comparisons per
    op (in a cell, per step).
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::cf::ControlFlowDialect",
    "::mlir::index::IndexDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def HoistRuntimeChecksPass
    : Pass<"lstm-hoist-runtime-checks", "::mlir::func::FuncOp"> {
  let summary = "Move run-time checks that do not change from step to step "
                "out of the loops";
  let description = [{
    The checks of `lstm-generate-runtime-checks` are made where the checked
    op is, so those of a cell's ops end up in the time loop, once per step,
    although what they compare (the batch, the hidden size) is the same at
    every step: host work per check per step, and, on the GPU path, a
    `gpu.wait` that `gpu-async-region` puts before each one, splitting the
    step's chain of asynchronous launches.

    For each `cf.assert` directly in the body of an `scf.for` whose
    condition is computed, inside the loop, only by ops without memory
    effects that are safe to run speculatively (no division that the loop
    might have guarded) from values defined outside it, this pass moves the
    check (and a copy of that computation) before the loop. The hoisted condition is
    `cond || lb >= ub`, so that a loop that runs no step checks nothing, as
    before. Identical checks (one condition, one message) are made once.
    Loops are visited innermost first, so a check leaves every loop it does
    not depend on. Runs on buffers, at the end of the bufferization of
    `lstm-to-cpu` and `lstm-to-nvvm`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::cf::ControlFlowDialect"];
}

def CheckAllocationsPass : Pass<"lstm-check-allocations", "ModuleOp"> {
  let summary = "Stop with a message when a buffer of the generated code "
                "cannot be allocated";
  let description = [{
    Runs on the LLVM dialect, at the end of `lstm-to-cpu` and `lstm-to-nvvm`
    (host code; kernels do not allocate). Every call to `malloc` or
    `aligned_alloc` (what `memref.alloc` becomes) is followed by a check of
    its result: a null pointer, which the code would otherwise write
    through (a segmentation fault), prints

        lstm: out of memory: cannot allocate a buffer of 25600000000 bytes (for the value made at lstm.mlir:52:18)

    on stderr (`dprintf` to file descriptor 2, after `fflush(NULL)` of the
    process's streams) and aborts, like a failed `cf.assert`
    (`lstm-report-failed-checks`). With `cpu-runtime` (`lstm-to-cpu`'s) it
    calls the CPU runtime's `lstmRuntimeCpuOutOfMemory(bytes, where)`
    instead, which reports the same and returns a guarded call to its
    caller (`lstmRuntimeCpuGuardedCall`) rather than abort.
  }];
  let options = [
    Option<"cpuRuntime", "cpu-runtime", "bool", /*default=*/"false",
           "Call the CPU runtime's lstmRuntimeCpuOutOfMemory, which a guarded "
           "call returns from">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ReportFailedChecksPass : Pass<"lstm-report-failed-checks", "ModuleOp"> {
  let summary = "Lower the host code's cf.assert to a message on stderr and "
                "abort";
  let description = [{
    Upstream's lowering of `cf.assert` (in `convert-cf-to-llvm`) prints the
    message with `puts`, on stdout; a caller that keeps stderr for errors (a
    log, `lstm-run`'s parent process, a test harness) saw that the compiled
    function stopped at a failed run-time check but not why. This pass,
    run just before `convert-cf-to-llvm` in `lstm-to-cpu` and
    `lstm-to-nvvm`, lowers every `cf.assert` of the host code itself: a
    branch on the condition to a block that writes the message and a
    newline to file descriptor 2 (`write`, unbuffered: nothing is lost when
    the process aborts) and calls `abort`. Identical messages share one
    global. The kernels' assertions (inside `gpu.module`s) are left to the
    GPU lowering.

    With `cpu-runtime` (`lstm-to-cpu`'s) the block calls the CPU runtime's
    `lstmRuntimeCpuCheckFailed(message)` instead, which writes the message
    to stderr and, inside `lstmRuntimeCpuGuardedCall` (the Python
    package's calls), returns the call to the caller with the message
    (`lstmRuntimeCpuLastFailure`) rather than abort the caller's process.
  }];
  let options = [
    Option<"cpuRuntime", "cpu-runtime", "bool", /*default=*/"false",
           "Call the CPU runtime's lstmRuntimeCpuCheckFailed, which a guarded "
           "call returns from">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::cf::ControlFlowDialect"];
}

def ConvertLSTMToPersistentPass
    : Pass<"lstm-to-persistent", "::mlir::ModuleOp"> {
  let summary = "Run a layer's whole time loop as one persistent GPU kernel";
  let description = [{
    Rewrites each `lstm.layer` whose cell has the form that
    `lstm-optimize{wavefront=false}` leaves (recurrent products of the
    states, `lstm.gate identity` with weights defined above the layer, read
    through column slices by one `lstm.pointwise` that makes every output and
    every new state) into one `gpu.launch` that runs every step: the layer's
    time loop moves into the kernel.

    Each block owns a tile of the hidden units (the columns `n` of the
    `[B, N]` step) for every batch row; each warp owns one unit of the tile
    (several when the tile has more units than the block has warps, one
    after the other, or at once: below) and a share of the rows. Per step
    the block stages the states that the products read in shared memory
    (in chunks of rows; with `async-copies`, the default, as 16-byte
    asynchronous copies,
    `nvgpu.device_async_copy` (cp.async, sm_80 and later), where N is a
    multiple of 4: all of a thread's copies in flight at once, none through
    its registers), then each warp
    takes its rows a group at a time (up to 4, fewer where their partial
    sums would take more than 32 registers): its lanes split the dot
    products of the group's staged rows with the weight rows the pointwise
    region reads (column `c + n` for a slice at column `c`), one butterfly
    of shuffles sums all of them (its first rounds halving what each lane
    holds), and lane `j` evaluates the cloned pointwise region for the
    group's row `j` and writes its outputs and new states. A warp's weights
    stay in its
    registers for the whole sequence where they fit (at most 64 per lane
    in blocks of 512 threads, 128 in blocks of 256, whose lanes may use 255
    registers), and are read from global memory (L1, L2) every step where
    they do not.

    Units at once (`units-at-once`, 0: chosen): where the weights stay in
    registers and a unit's columns use each staged value fewer than four
    times (a backward step's `dG · R`, one column a unit; Cho's GRU's
    phases), a warp takes 2 or 4 units of the tile at once, as many as
    bring the columns a staged value feeds to four and whose weights fit
    the registers: it loads each staged value once for all of them, and
    lane `s · size + j` of a group evaluates row `j` of its `s`-th unit.
    The unit slots give way to more warps on the rows. Shared memory's
    bandwidth bound the backward steps: char-rnn's backward kernel read 4x
    the shared-memory wavefronts of its forward (ncu), and took 0.321 ms
    with one unit a warp against 0.218 with four at once (H200,
    docs/benchmarks.md, "Several units a warp at once").
    The states live in two global buffers used alternately; a grid-wide
    barrier (`lstm.grid_barrier`) separates the steps. A product of a value
    the step computes (Cho's `R_n (r ⊙ h)`, MGU's) needs that value for
    every unit: the step then runs in phases, each pointwise op in the
    phase after those whose results its products read, with a grid barrier
    between phases and the values that cross them in global scratch
    buffers (two each, used by alternate steps, as the states). A product
    is computed in its own phase only: the columns of it that a later
    phase reads cross in scratch buffers too. Where no
    product reads a state (a backward step's products read its dG), a
    block reads only its own units' states and a block barrier ends the
    step instead of a grid barrier: the grid barrier between the phases
    keeps any block from writing a scratch buffer that another still
    stages. A phase that stages nothing takes the whole batch at once. A backward cell's dG, assembled from N-wide pointwise results
    by `tensor.insert_slice`s into a `tensor.empty`, may be an output and
    the input of a product (K its width) whose [B, N] result is a new
    state. The kernel's name
    starts with `lstm_persistent`: the runtime launches such kernels
    cooperatively (`cuLaunchCooperativeKernel`), which guarantees that every
    block is resident (or fails with an error naming the launch) so the
    barrier cannot hang. A block of 512 threads takes a whole SM's
    registers: `max-blocks` (default 128, for the H100's 132 SMs); all the
    blocks must be resident at once (one per SM is what the runtime can
    count on). `block-size` 0 (the default) chooses per layer: 512 threads,
    or 256 where a warp's weights fill more than half of the 64 registers
    a lane keeps them in (H = 512: with up to 255 registers a thread the
    kernels no longer spill, 17-19% faster at batch 1), do not fit in
    them at all but fit in the 128 of a 256-thread block (H = 1024), or
    leave the warps more units at once in the 128 (a backward layer of
    H = 256).

    The cost model (unless `always`): a layer whose warps would each take
    several units (more units a block than warps) keeps the per-step
    lowering; the others get both lowerings, chosen at run time: the kernel
    while a step's multiply-adds (B · N · columns · K) stay under 2^24
    (2^26 where a warp's weights fit in no block's registers and are read
    from memory at every step, H = 2048; where they fit only in a
    256-thread block's, H = 1024, that kernel to 2^24 and the one of
    512-thread blocks reading them from memory to 2^26, two branches) and
    the GPU has at least as many
    SMs as the kernel has blocks (`lstmRuntimeGpuMultiprocessors()`, a call
    of the CUDA runtime declared in the module), the per-step layer (marked
    `lstm.persistent_fallback`, which this pass leaves alone) otherwise.
    The bounds come from the H100 measurements of docs/benchmarks.md. With
    `always`, a GPU with fewer SMs than blocks fails the launch with
    CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE (lower `max-blocks` for it).
    Without `per-step-fallback`, the cost model's else branches do not
    compile the per-step lowering of the layers (the wavefront's branch
    under `lstm-wavefront{persistent=true}` excepted): they call
    `lstmRuntimeMissingPerStepFallback(batch)`, which records a failure
    saying that the kernel does not run and the library has no fallback
    (the rest of the run is skipped, as after any failure), and yield
    empty tensors of the layers' result extents. A library then compiles
    faster (char-rnn's training library: about a quarter of the compile)
    and runs as fast where the kernels run; `lstmc` compiles the complete
    library when a call first needs it (docs/python.md).

    Shared memory: each staged value gets an equal share of
    `shared-memory` bytes, and a phase stages as many rows at a time as the
    share holds of the widest (no more than the largest batch the cost
    model runs the kernel for, nor, where a warp takes its rows one at a
    time, than one row per warp); a launch takes only what its batch
    needs.
    Above the 48 KiB every GPU gives a block, the run-time choice also asks
    the GPU (`lstmRuntimeGpuSharedMemoryPerBlock()`), and the runtime opts
    the kernel in at its launch. `lstm-to-nvvm` gives 224 KiB on sm_90 and
    later, 96 KiB on sm_8x (what every sm_8x GPU gives), 32 KiB before: a
    backward step's dG, 4N floats a row, then stages a whole batch at once
    where it used to take 16 rows at a time at N = 128.

    Stacks (`stacks`, on by default): a chain of layers, each reading the
    hoisted projection of the one before's output (collapse_shape, an
    `lstm.gate identity`, expand_shape), becomes one kernel whose blocks
    are split among the layers, layer l's step t in iteration t + l of
    T + L - 1 (a wavefront inside the kernel), layer l + 1's projection
    part of its step (the hoisted GEMM dropped); a backward's `dG · W`
    link likewise, the weight gradients between the layers moved after
    them. The blocks are split among the layers by their work; blocks of
    256 threads where a layer's warps would otherwise not keep their
    weights in registers (H = 512) or where they take more units at once
    in them (char-rnn's backward: 4 at once in both layers against 4 and 2
    with 512 threads, whose lanes would spill), of 512 otherwise. Under the
    cost model it runs behind its own `scf.if` (every
    layer's weights in registers, the batch bound of the layers' own
    kernels, or, where a layer's projection in the step makes its warps take
    their rows one at a time and its own kernel's did not, the bound of
    its whole work with the link; the grid fits the SMs), the layers as
    they were in its else
    branch, for the per-step lowering; in the branch that
    `lstm-wavefront{persistent=true}` keeps for the kernels, its conditions
    join the branch's instead.

    Row tiles (`row-tiles`, on by default): where a layer's blocks would
    each take fewer units than they have warps (the spare warps splitting
    the rows), the same number of blocks or fewer take more units each,
    one a warp, and split the batch's rows as well: block (u, r) computes
    units [u·U, (u+1)·U) of rows [r·⌈B/R⌉, (r+1)·⌈B/R⌉), R tiles of rows.
    U is half the block's warps (two warps a unit, splitting the tile's
    rows) where that leaves at least two tiles of rows, else all of them.
    Each warp does the same work as before, but a block stages only its
    own rows of the values its products read: at char-rnn's backward (8
    units a block of 16 warps, 4 tiles of rows) 13 rows of dG instead of
    all 50.

    Layers with lengths (packed sequences) run as kernels too: a step at
    or past row b's length stores row b's old states and zero outputs, as
    the per-step lowering's masks do. N, the kernel's units, is the widest
    state's width; a narrower state is a product's result in its own phase
    (LSTMP's projected h [B, P] = W_hr (o * tanh(c)): the step's second
    phase), the units past its width computing the product's last row and
    storing nothing. A pointwise op k · N wide (a layer normalisation's
    over the 4N gate pre-activations) evaluates k pieces a unit, at
    columns unit + j · N; one narrower than N (an LSTMP backward's dh +
    dy) is evaluated by the units below its width; a lone elementwise arith or math op of the cell
    (one that lstm-fuse-elementwise leaves unfused) is evaluated as a
    one-op region; a concatenation of N-wide results may be a pointwise
    operand.

    Layers it does not handle (batched wavefront cells, a gate with an
    epilogue in the step, pointwise values wider than N whose width is not
    a multiple of N, a state or output made by neither a pointwise op nor
    a product, ...) are left for the per-step lowering; `-debug-only=lstm-to-persistent` prints why. The input
    projections are not part of the kernel: `lstm-hoist-input-projection`
    makes them one GEMM before the layer.

    The products are fp32 FMA dot products, or, with `tensor-cores` (what
    `lstm-to-nvvm` passes on sm_80 and later), tensor-core instructions
    (`lstm.warp_mma`: `mma.sync` m16n8k8 on TF32 operands, rounded to nearest, or m16n8k16 on bf16
    ones, accumulating in fp32) where a warp's weights fit in its
    registers as their B fragments and no weight is a splat constant: a
    warp takes tiles of 16 staged rows (the instruction's M) by 8 weight
    rows (N: its units at once times the columns each needs; an LSTM's
    four gates, two units), K 16 at a time, from shared memory rows padded
    to a stride of 16 (mod 32) floats. Each lane loads the terms 16q + 4t
    .. + 3 of its rows g and g + 8 in one 16-byte load each (the
    instruction's K order permuted alike in A and B), the weights once
    into registers before the time loop; the instructions are dealt out
    to 2 (512-thread blocks) or 4 independent accumulators. The tile of
    results goes through the warp's shared memory between warp barriers
    (`lstm.warp_barrier`), from which lane l evaluates row l mod 16 of the
    tile for its unit l / 16 (+ 2 per round). Below
    `tensor-cores-from-batch` (16 for TF32, 4 for bf16: where the kernel
    of dot products was as fast or faster, docs/benchmarks.md) a second
    kernel, of dot products, runs instead, chosen at run time by the
    batch (a layer's, and a stack's kernel alike).
    With `split-tf32` (what `lstm-to-nvvm` passes under
    `compute-type=fp32`) each operand is split into two TF32 values, big
    (its bits truncated to TF32) and small (the rest, exact in fp32), and
    each TF32 instruction becomes three, small · big, big · small and big
    · big ("3xTF32"): products as exact as the fp32 dot products'. The
    registers keep the weights' fp32 bits, split at every use (two
    instructions a register), so the layouts are TF32's. The tensor cores
    then start where the layer's (or stack's) kernel of dot products stops
    or is overtaken, from the rows its warps take in turn at that batch
    (more than 4 one at a time, 12 in groups), at B = 64 at the latest
    (docs/benchmarks.md, "fp32 on tensor cores" and "Where the 3xTF32
    kernel starts").
    With `bf16-operands` (what `lstm-to-nvvm` passes under
    `compute-type=bf16`) both operands of each product are rounded to bf16
    first, to nearest with ties to even: the weights once, as a warp loads
    them into its registers (at each load where it reads them from
    memory), the staged values as a warp reads them from shared memory
    (rounded once in shared memory instead, between two block barriers,
    char-rnn's bf16 training step took 8% longer: docs/benchmarks.md).
    The product of two bf16 values is exact in fp32, so the kernel computes
    what a bf16 GEMM with fp32 accumulation does (the per-step lowering's
    `lstm-gemm-operands-to-bf16`), summed in its own order; the pointwise
    work and the states stay fp32.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"0",
           "Threads per block of the persistent kernels (a multiple of 32 in "
           "[32, 1024]); 0: 512, or 256 where a warp's weights fill more "
           "than half of its 64 registers for them">,
    Option<"maxBlocks", "max-blocks", "int64_t", /*default=*/"128",
           "Most blocks of a persistent kernel (all must be resident)">,
    Option<"always", "always", "bool", /*default=*/"false",
           "Every layer the kernel handles, without the cost model">,
    Option<"asyncCopies", "async-copies", "bool", /*default=*/"true",
           "Stage the products' inputs with asynchronous 16-byte copies "
           "(nvgpu.device_async_copy: cp.async, sm_80 and later)">,
    Option<"sharedMemory", "shared-memory", "int64_t", /*default=*/"32768",
           "Bytes of shared memory a block may stage the products' inputs "
           "in (above 48 KiB the cost model also asks the GPU at run time)">,
    Option<"rowTiles", "row-tiles", "bool", /*default=*/"true",
           "Blocks split the batch's rows as well as the units where a "
           "block has warps to spare: each stages only its own rows">,
    Option<"unitsAtOnce", "units-at-once", "int64_t", /*default=*/"0",
           "Units a warp computes at once, in one pass over the staged "
           "values (1, 2 or 4, fewer where their weights do not fit in "
           "the registers); 0: chosen by the layout">,
    Option<"perStepFallback", "per-step-fallback", "bool",
           /*default=*/"true",
           "Under the cost model, the per-step lowering beside each kernel "
           "for the batches and GPUs it does not run at; false: such a run "
           "fails with a message saying so (the library compiles faster)">,
    Option<"stacks", "stacks", "bool", /*default=*/"true",
           "Run a chain of layers, each reading the projection of the one "
           "before's output, as one kernel whose blocks are split among "
           "the layers, their steps a wavefront">,
    Option<"bf16Operands", "bf16-operands", "bool", /*default=*/"false",
           "Round both operands of every product to bf16 before its fp32 "
           "multiply-adds (the bf16 compute type: bf16 operands, fp32 "
           "accumulation)">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"false",
           "Compute the products on tensor cores (mma.sync, sm_80 and "
           "later) where a warp's weights fit in its registers as the "
           "instruction's fragments: bf16 operands under bf16-operands, "
           "else TF32; fp32 accumulation">,
    Option<"splitTF32", "split-tf32", "bool", /*default=*/"false",
           "With tensor-cores and without bf16-operands, each operand as "
           "the sum of two TF32 values and three instructions a tile where "
           "TF32 takes one (3xTF32): products as close to fp32's as the "
           "dot products' (the fp32 compute type); the weights split at "
           "each use, in as many registers as TF32's">,
    Option<"tensorCoresFromBatch", "tensor-cores-from-batch", "int64_t",
           /*default=*/"0",
           "With tensor-cores, the smallest batch that runs the tensor-core "
           "kernel, a kernel of dot products below it (chosen at run time; "
           "1: tensor cores at every batch); 0: 16 for TF32, 4 for bf16, "
           "under split-tf32 the batch after the dot products' own bound "
           "(at most 64)">,
    Option<"tensorCoresSplitDepth", "tensor-cores-split-depth", "int64_t",
           /*default=*/"-1",
           "With tensor-cores, how many of the warps that split a block's "
           "rows split each tile's depth instead, each keeping its share of "
           "the weights (a power of two, fewer where the warps or the depth "
           "do not allow it); 0: the least that fits the weights in the "
           "registers where they would not fit whole, 1: none; -1 (chosen): "
           "as 0 under split-tf32 or where the dot products' kernel does "
           "not reach the batch the tensor cores start at, else none">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::cf::ControlFlowDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::vector::VectorDialect"
  ];
}

def LowerGridBarriersPass : Pass<"lstm-lower-grid-barriers"> {
  let summary = "Expand lstm.grid_barrier into block barriers and a "
                "release/acquire counter, lstm.block_barrier into "
                "gpu.barrier, lstm.warp_barrier and lstm.warp_mma into NVVM";
  let description = [{
    Each `lstm.grid_barrier %counter[%k]` in a kernel becomes: `gpu.barrier`
    (the block's writes are done); in thread (0, 0, 0) of the block, an
    atomic add of 1 to `counter` with release ordering at device scope
    (`llvm.atomicrmw`), then a loop of acquire loads (`llvm.load atomic`:
    memref has no atomic load) until `counter >= k * G` (G the number of
    blocks of the grid); then `gpu.barrier` again. This is the grid
    synchronisation of CUDA's cooperative groups, written with upstream
    ops; it needs every block of the grid resident (a cooperative launch)
    or it can wait forever. Runs before SCF is lowered to control flow (it
    builds `scf.if` and `scf.while`).

    Each `lstm.block_barrier` becomes `gpu.barrier`, after
    `nvgpu.device_async_create_group` and `nvgpu.device_async_wait` (wait
    for all of the thread's asynchronous copies) where it has
    `wait_async_copies`.

    The other GPU ops of the persistent kernels, which the `lstm` dialect
    has for the memory effects the upstream ops do not declare: each
    `lstm.warp_barrier` becomes `nvvm.bar.warp.sync` of every lane, each
    `lstm.warp_mma` `nvvm.mma.sync` (m16n8k8 TF32, or m16n8k16 bf16).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def ConvertHostMemoryToGPUPass
    : Pass<"lstm-host-memory-to-gpu", "::mlir::func::FuncOp"> {
  let summary = "Move the host code's buffers to the GPU";
  let description = [{
    Prepares bufferized host code for the GPU path, where every buffer a
    function touches lives in device memory (its arguments are device
    pointers): `memref.alloc`/`memref.dealloc` outside GPU kernels become
    `gpu.alloc`/`gpu.dealloc`, and `memref.copy` becomes `linalg.copy`, which
    the linalg-to-GPU lowering turns into a kernel like any other linalg op
    (the host must never dereference device memory). Buffers the host itself
    reads or writes (the deallocation helper's pointer lists and ownership
    flags) stay in host memory.

    Constants (`memref.get_global`, whatever pass made them: the stacks of
    a constant that `lstm-wavefront` batches, say) are host memory too. The
    device reads a copy, allocated with `gpu.alloc` at the start of the
    function and freed before it returns (a returned constant is the
    caller's): a `linalg.copy` from the global, whose kernel reads the global
    from the kernels' module (`lstm-parallel-loops-to-gpu` puts the
    `memref.get_global` into the kernel, outlining copies the global).

    Afterwards, every buffer of a linalg op must be device memory; one made
    by `memref.alloca` (or any other host buffer) is reported as an error
    naming the op, instead of a kernel reading host memory at run time.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect"
  ];
}

def ConvertParallelLoopsToGPUPass
    : Pass<"lstm-parallel-loops-to-gpu", "::mlir::func::FuncOp"> {
  let summary = "Turn each outermost scf.parallel into a 1-D gpu.launch";
  let description = [{
    Every outermost `scf.parallel` outside a kernel (one per linalg op after
    `convert-linalg-to-parallel-loops`) becomes a `gpu.launch` over its whole
    iteration space, linearised: thread `i` of the grid runs iteration
    `delinearize(i)` (reductions stay sequential loops inside the body).
    Unlike upstream's mapping, it needs no static bounds and no tiling, and
    it covers any rank: one kernel launch per loop nest, `block-size`
    threads per block. A `memref.get_global` that the body reads is cloned
    into the launch, so that the kernel reads the global from the kernels'
    module (device memory), not from the host's.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def MergeGPULaunchesPass
    : Pass<"lstm-merge-gpu-launches", "::mlir::func::FuncOp"> {
  let summary = "Run independent consecutive gpu.launch ops as one launch";
  let description = [{
    After bufferization, a function's GPU code has many launches that move
    little data: copies of states into the slices of stacked results,
    zero fills, copies of gradients into the slices of a parameter's: 40
    of the 115 kernels of a char-rnn training step, about a microsecond
    each plus the gap before the next. This pass merges consecutive
    launches of the same block size into one whose grid is the sum of
    theirs: block b runs the first launch's body where b is below its grid,
    else the second's with b less the first grid, and so on.

    Launches merge where nothing between them reads or writes memory (pure
    ops, allocations, assertions), where neither writes what the other
    reads or writes (their memrefs traced to distinct allocations, an
    allocation and an argument, or slices of one buffer whose static
    offsets in some dimension do not overlap), and where each is a 1-D
    grid of 1-D blocks with no dynamic shared memory, no asynchronous
    dependencies and no kernel name (the persistent kernels, whose grid
    barriers count the grid's blocks, keep theirs). The merged launch takes
    the last one's place; the earlier ones move down past the ops between,
    which do not touch memory.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def ForkIndependentWorkPass
    : Pass<"lstm-fork-independent-work", "::mlir::ModuleOp"> {
  let summary = "Run independent products of host code on forked GPU streams";
  let description = [{
    A backward pass ends with products that do not depend on each other:
    every layer's weight, recurrent-weight and bias gradients and the
    input's, each a GEMM that fills a few of the GPU's SMs. On one stream
    they run one after another with most of the GPU idle and a gap before
    each. This pass finds them in the bufferized host code of a CUDA
    library and runs them on several streams at once, as cuDNN's backward
    does.

    In each block outside kernels it takes the longest runs of ops that
    are device work (linalg ops, `memref.copy`, `gpu.memset`, `gpu.memcpy`
    and `gpu.launch` without a name, on buffers allocated by `gpu.alloc`
    or passed as arguments, and `scf.for` and `scf.if` ops whose own ops
    are all device work, ops that touch no memory or frees, such as
    lstm-split-tf32-gemms's products in parts behind its check of their
    extents), ops that touch no memory (index arithmetic, views,
    allocations, assertions) and frees. A loop's or branch's results count
    as buffers it writes, and an op that touches no memory but reads one
    ends the run (the run's ops that touch no memory move before its
    work). The device work of a run
    splits into groups no two of which touch a common buffer where one of
    them writes it (`mayOverlap`, as lstm-merge-gpu-launches decides). Where
    at least two groups hold a product (a linalg op with a reduction), the
    run is rewritten as: the ops that touch no memory, in their order;
    `lstmRuntimeStreamFork(n)`; for each stream, `lstmRuntimeStreamSelect(s)`
    and its groups' work in program order; `lstmRuntimeStreamJoin()`; the
    frees. The groups with a product go to the streams in turn (at most
    `max-streams`), those without one to the run's stream (stream 0), where
    consecutive launches may still merge. The runtime
    (lib/Runtime/ForkedStreams.cpp) makes the side streams wait for the
    run's stream at the fork and the run's stream wait for them at the
    join, with events: a CUDA graph captures both as edges.

    Runs after bufferization and lstm-convert-host-memory-to-gpu, before
    the GEMMs become cuBLAS calls (which the runtime then issues on the
    selected stream) and before `gpu-async-region`, which ends its chains of
    launches at each runtime call, so that every launch after a selection
    goes to the stream selected.
  }];
  let options = [
    Option<"maxStreams", "max-streams", "int64_t", /*default=*/"4",
           "The most streams a run of independent products is split among "
           "(the run's own included; 1 leaves the code alone)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect"
  ];
}

def MergeGPUModulesPass
    : Pass<"lstm-merge-gpu-modules", "::mlir::ModuleOp"> {
  let summary = "Move every outlined kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` puts each kernel in a `gpu.module` of its own,
    and `gpu-module-to-binary` compiles each module separately (one NVPTX
    code generation and one `ptxas` run per kernel): tens of seconds of
    compile time for a network with many kernels on a small machine. This
    pass moves the contents of every `gpu.module` of the module into the
    first one (renaming a symbol only if its name is taken there) and points
    each `gpu.launch_func` at its kernel's new place, so that the kernels
    compile, and load at run time, as one module. It runs before targets
    are attached; a module that has one already (the persistent kernels,
    which `lstm-to-nvvm{persistent-first}` lowers before the rest) is left
    as it is.

    Then it keeps one kernel of each set of identical ones (same type,
    same attributes but the name, equivalent bodies), pointing their
    launches at it: functions lowered side by side repeat kernels (a
    module with its gradient functions has the training forward's and the
    backward's kernels twice, in `@f_grad` and in `@f_train` /
    `@f_backward`). For char-rnn's LSTM with gradients, 124 kernels become
    39; for the 4-layer appleyard network, 245 become 44.

    With `after-lowering`, it runs after the kernels are in the LLVM and
    NVVM dialects instead, with their targets attached: modules with the
    same targets become one, so that `gpu-module-to-binary` links
    libdevice, generates code and runs `ptxas` once rather than once a
    module. What kept such modules apart until then, a data layout of
    32-bit indices for the persistent kernels (`lstm-narrow-kernel-indices`),
    is in their types after the lowering; the first module's attributes are
    kept. External declarations (the libdevice functions the kernels call)
    that both modules have with one type are shared, not renamed; with two
    types, or an op of another dialect left in a module, the pass fails
    naming it.
  }];
  let options = [
    Option<"afterLowering", "after-lowering", "bool", /*default=*/"false",
           "Merge modules already lowered to the LLVM and NVVM dialects, "
           "those with the same targets (see the description)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def SpecializeKernelArgumentsPass
    : Pass<"lstm-specialize-kernel-arguments", "::mlir::ModuleOp"> {
  let summary = "Give each kernel's arguments the types and constants that "
                "all its launches pass";
  let description = [{
    `lstm-to-nvvm{persistent-first}` outlines the persistent kernels as soon
    as `lstm-to-persistent` has made them, before bufferization: the host
    passes then do not walk their unrolled bodies, and the kernels can be
    compiled while the rest of the host code is lowered. Outlined that
    early, a kernel takes its buffers with the fully dynamic layouts of
    `bufferization.to_buffer`, and host values that are constants only once
    canonicalized. Kept inline, the canonicalizer would have folded both
    into the body.

    This pass does so across the launch. For every `gpu.func` kernel whose
    launches all pass, for one argument, a `memref.cast` from one ranked
    memref type, the argument takes that type (the body reads it through a
    cast that the canonicalizer then folds) and the launches pass the
    cast's source; where they all pass one scalar `arith.constant`, the
    kernel makes the constant itself and the argument goes. A kernel that
    no launch names is left as it is. Run the canonicalizer on the kernels
    after it.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def NarrowKernelIndicesPass
    : Pass<"lstm-narrow-kernel-indices", "::mlir::ModuleOp"> {
  let summary = "Move kernels into a gpu.module whose index type is 32 bits "
                "wide, passing them 32-bit sizes and 64-bit pointers";
  let description = [{
    MLIR lowers `index` to the host's 64 bits in kernels too: every address
    computation of a kernel is 64-bit integer arithmetic (two instructions
    for an add, several for a multiply on NVIDIA GPUs), each size or stride
    it keeps takes two registers. The persistent kernels of
    `lstm-to-persistent` run long, register-hungry loops of index
    arithmetic: char-rnn's backward kernel wanted 231 registers a thread,
    169 with 32-bit indices.

    This pass moves the kernels whose names start with `kernel-prefix`
    into a `gpu.module` of their own whose data layout makes `index` 32 bits
    wide (`#dlti.dl_entry<index, 32 : i64>`; the NVVM lowering takes its
    index width from it). Their signature changes, because the host passes
    64-bit descriptors: an `index` argument becomes an `i32`; a memref
    argument becomes its aligned pointer as an `i64` followed by an `i32`
    for each of its offset, sizes and strides that the type leaves dynamic.
    The kernel rebuilds the memref from them (LLVM dialect ops and an
    `unrealized_conversion_cast` that the NVVM lowering folds away). Each
    `gpu.launch_func` of such a kernel passes those values, and asserts
    (`cf.assert`) that every memref spans fewer than 2^30 elements and every
    `index` lies within ±2^30, so that no address computed in the kernel,
    one past the last row included, overflows 32 bits.
    `lstm-to-persistent` keeps its kernels' sequences below that bound by
    its own run-time condition (it runs the per-step layer above it), so
    the assertion never fires behind it.

    A kernel with an argument of another kind (a memref in a memory space,
    a vector) stays where it is. Runs after `lstm-merge-gpu-modules` and
    before `lstm-lower-grid-barriers`, which takes the counter's address
    with the module's index width.
  }];
  let options = [
    Option<"kernelPrefix", "kernel-prefix", "std::string",
           /*default=*/"\"lstm_persistent\"",
           "Narrow the kernels whose names start with this">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::DLTIDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect"
  ];
}

def ConvertNVGPUToNVVMPass
    : Pass<"lstm-convert-nvgpu-to-nvvm", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Upstream's nvgpu-to-NVVM patterns at the module's index "
                "width";
  let description = [{
    Upstream's `convert-nvgpu-to-nvvm` builds its type converter without
    the module's data layout: it lowers memref descriptors with 64-bit
    sizes even in a `gpu.module` whose `index` is 32 bits wide (made by
    `lstm-narrow-kernel-indices`), and `convert-gpu-to-nvvm`, which reads
    the data layout, then meets descriptors of two widths. This pass runs
    the same upstream patterns (`populateNVGPUToNVVMConversionPatterns`)
    with the converter of the module's data layout and its GPU address
    spaces. It converts the asynchronous copies the persistent kernels
    use (`nvgpu.device_async_copy`, `_create_group`, `_wait`); an nvgpu
    type it has no conversion for (mbarriers, warpgroup accumulators,
    tensor maps) makes the conversion fail.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"
  ];
}

def ConvertFmaToLLVMPass
    : Pass<"lstm-fma-to-llvm", "::mlir::gpu::GPUModuleOp"> {
  let summary = "math.fma of f32 and f64 as llvm.intr.fma in a gpu.module";
  let description = [{
    `convert-gpu-to-nvvm` lowers `math.fma` through libdevice, as a call of
    `__nv_fmaf` (`__nv_fma` for f64) whose body is LLVM's `fma` intrinsic.
    The persistent kernels' products are unrolled chains of fused
    multiply-adds, so the kernels' code generation linked that definition
    and inlined it over a thousand times (1,224 calls in char-rnn's training
    library, about 0.15 s of its compile on the 2-core machine). This pass,
    run before the NVVM lowering, rewrites each f32 or f64 `math.fma`
    without fast-math flags to `llvm.intr.fma`: the same fused multiply-add
    with one rounding (PTX `fma.rn`). Other types keep upstream's lowering.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def ConvertGemmToCublasPass
    : Pass<"lstm-gemm-to-cublas", "::mlir::ModuleOp"> {
  let summary = "Turn buffer-level GEMMs into cuBLAS calls through the runtime";
  let description = [{
    On the GPU path, after bufferization and `lstm-host-memory-to-gpu`:
    every `linalg` contraction on memrefs that is a plain or batched matrix
    product (`C[m,n] += A[m,k]·B[k,n]`, with either operand transposed, an
    optional leading batch dimension, rows contiguous) becomes a call of
    `lstmRuntimeGemmStridedBatched` (lib/Runtime/Cublas.cpp), which runs
    cuBLAS on the stream of the run's kernels. When the accumulator is
    zero-filled right before, the fill is dropped and the call computes with
    `beta = 0`.

    `min-size` keeps small products as generated kernels: a product of
    `m·n·k·batch` below it is left alone; when a size is dynamic, both
    versions are emitted behind an `scf.if` on the run-time size.
    `compute-type` picks the GEMM arithmetic: `fp32` (no TF32), `tf32`, or
    `bf16` (the product's operands must then be bf16, accumulating in fp32:
    `lstm-gemm-operands-to-bf16` rounds them at tensor level; an fp32
    product left here is an error rather than a silent fp32 GEMM).
    Products below `min-size` stay generated kernels; on bf16 operands,
    those read bf16 and compute in fp32.
    Contractions it cannot express (non-unit inner strides, other element
    types, other bodies) stay linalg and become kernels.
  }];
  let options = [
    Option<"minSize", "min-size", "int64_t", /*default=*/"0",
           "Smallest m·n·k·batch sent to cuBLAS">,
    Option<"computeType", "compute-type", "::mlir::lstm::GemmComputeType",
           /*default=*/"::mlir::lstm::GemmComputeType::fp32",
           "GEMM arithmetic: fp32, tf32 or bf16",
           "::mlir::lstm::gemmComputeTypeValues()">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def ApproximateMathPass : Pass<"lstm-approximate-math"> {
  let summary = "Replace f32 tanh, exp, log, ... by upstream's polynomial approximations";
  let description = [{
    The CPU path's transcendental functions: each f32 `math` op among
    `functions` becomes upstream's polynomial approximation (plain `arith`,
    `populateMathPolynomialApproximationPatterns` and
    `populatePolynomialApproximateTanhPattern`), which LLVM vectorises,
    instead of a libm call per element. Other element types (the float64
    builds) keep libm. The default leaves `log` out: upstream's polynomial
    flushes denormal inputs (log(1e-45) gives -87.3, not -103.3). The
    accuracy over the whole f32 range (every binade, large |x|, denormals,
    infinities, NaN) is checked against float64 by
    `test/Conversion/ApproximateMath/accuracy.test`: at most 3e-7 relative
    error, libm's class.
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "The math ops to approximate (tanh, exp, expm1, log, log1p, "
               "log2)",
               "llvm::cl::list_init<std::string>({\"tanh\", \"exp\", "
               "\"expm1\", \"log1p\"})">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def ConvertGemmToBlasPass
    : Pass<"lstm-gemm-to-blas", "::mlir::ModuleOp"> {
  let summary = "Turn buffer-level GEMMs into GEMM-library calls through the CPU runtime";
  let description = [{
    The CPU path's counterpart of `lstm-gemm-to-cublas`, run after
    bufferization: every `linalg` contraction on memrefs that is a plain or
    batched matrix product (`C[m,n] += A[m,k]·B[k,n]`, either operand
    transposed, an optional leading batch dimension, rows contiguous) on
    f32 or f64 buffers becomes a call of `lstmRuntimeCpuSgemm` or
    `lstmRuntimeCpuDgemm` (lib/Runtime/CpuBlas.cpp: oneDNN for f32, OpenBLAS
    for f64). When the
    accumulator is zero-filled right before, the fill is dropped and the
    call computes with `beta = 0`. The products are recognised as
    `lstm-gemm-to-cublas` recognises them (lstm/Conversion/Utils/GemmCall.h):
    the gates' combined products, the hoisted input projections, the
    batched products of a wavefront and the backward's weight gradients.

    `min-size` keeps small products as loops: a product of `m·n·k·batch`
    below it is left alone; when a size is dynamic, both versions are
    emitted behind an `scf.if` on the run-time size, as they are for
    operands whose rows only run time can tell contiguous. Contractions of
    other element types (or mixed ones) stay linalg.
  }];
  let options = [
    Option<"minSize", "min-size", "int64_t", /*default=*/"0",
           "Smallest m·n·k·batch sent to the BLAS">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def PrepareLoopGemmsPass : Pass<"lstm-prepare-loop-gemms", "::mlir::ModuleOp"> {
  let summary = "Pack a loop-invariant GEMM operand once, before the loop";
  let description = [{
    Runs after `lstm-gemm-to-blas` (and loop-invariant code motion). A call
    of `lstmRuntimeCpuSgemm` inside an `scf.for` that computes one product
    (batch 1) whose B, sizes, transposes, alpha, beta and leading dimensions
    are all defined outside the loop, and whose B is (a view of) an argument
    of the enclosing function, becomes a call of
    `lstmRuntimeCpuSgemmPrepared(plan, A, C)`, with
    `plan = lstmRuntimeCpuSgemmPrepare(...)` before the loop and
    `lstmRuntimeCpuSgemmRelease(plan)` after it (lib/Runtime/CpuPreparedGemm.cpp):
    the recurrent weight of a time loop is packed into the GEMM kernels'
    layout once per call of the network instead of at every step.

    Why B must be a function argument: the plan holds B packed, so nothing
    may write B while the loop runs; the generated code never writes its
    arguments (the caller owns them, `lstm-read-only-arguments`), and no
    other buffer is proven unwritten. Calls that miss a condition are left
    as they are.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect"
  ];
}

def CollapseBeforeSlicePass
    : Pass<"lstm-collapse-before-slice", "::mlir::func::FuncOp"> {
  let summary = "Collapse a whole tensor and slice the result, not the other way round";
  let description = [{
    A stack's layer reads the output sequence of the layer below,
    `[T, B, H]`, as the `[T·B, H]` operand of its hoisted input projection:
    `tensor.collapse_shape` of an `extract_slice` of the `[T+1, B, H]`
    sequence its loop wrote (slot 0 holds the initial state). After
    bufferization that slice is a view whose first stride is not known to
    be `B·H`, so the collapse cannot be proven to be a view and is a copy of
    the whole sequence, for every layer.

    This pass rewrites `collapse_shape(extract_slice(x))` into
    `extract_slice(collapse_shape(x))` where that means the same: unit
    strides, and in each group of collapsed dimensions first any of size 1
    (at any offset), then one sliced (offset `o`, size `n`), the others
    taken whole. A dimension the slice drops (size 1) joins the group of
    the next one it keeps: a layer's `[T, B, N]` row of the wavefront's
    `[L, T+L-1, B, N]` store is rows `(l·(T+L-1) + t0)·B` to that plus
    `T·B` of the store collapsed to `[L·(T+L-1)·B, N]`. The new slice is a
    view of the whole tensor's buffer after bufferization, with no copy.
    A size counts as a whole extent when it is static and equal, the
    source's `tensor.dim`, or what the source was built from takes it
    from (an expansion's output shape, an operand of a concatenation along
    another dimension: the canonicaliser folds their `tensor.dim` into
    it).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def OutlineParallelLoopsPass
    : Pass<"lstm-outline-parallel-loops", "::mlir::ModuleOp"> {
  let summary = "Make the outermost parallel loops of CPU code callable on a range";
  let description = [{
    The first half of running a CPU network's elementwise work on several
    threads (the second is `lstm-dispatch-parallel-bodies`). Each
    `scf.parallel` of a `func.func` that is not inside another one and
    carries no reduction moves into a new private function
    `@<caller>_parallel(%lo: index, %hi: index, %work: index, ...)` (with
    a numeric suffix where that name is taken), marked
    `lstm.parallel_body`: the loop itself, its first dimension
    narrowed to the iterations `[lo, hi)`. The values the loop uses from
    outside (buffers, sizes, scalars) become the function's further
    arguments; constants are cloned into it instead, so that the code
    generator still sees static extents.

    The loop is replaced by one call of the function on all iterations,
    `[0, n)`, so that the program means the same with or without the
    dispatch pass. `%work` (unused by the body) is the call's estimate of
    the work of one iteration of the first dimension: the number of
    iterations of the other dimensions times the number of operations in
    the loop's body, for the runtime to decide how many threads the call is
    worth (`lstmRuntimeCpuParallelFor`, lib/Runtime/CpuParallelFor.cpp).

    Runs on memrefs, after `convert-linalg-to-parallel-loops` (and the
    polynomial approximations of `lstm-approximate-math`, which the
    operation count then includes).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def DispatchParallelBodiesPass
    : Pass<"lstm-dispatch-parallel-bodies", "::mlir::ModuleOp"> {
  let summary = "Call the parallel bodies of CPU code through the runtime's thread pool";
  let description = [{
    Runs on the LLVM dialect, after the conversion of the CPU pipeline. Each
    call of a function marked `lstm.parallel_body` (made by
    `lstm-outline-parallel-loops`; its arguments are `lo, hi, work, ...`)
    becomes

        lstmRuntimeCpuParallelFor(@<body>_task, ctx, lo, hi, work)

    where `ctx` is a stack slot (allocated in the caller's entry block, so a
    call inside a time loop does not grow the stack) holding the call's
    other arguments, and `@<body>_task(ctx, lo, hi)` is a new function that
    reads them back and calls the body on `[lo, hi)`. The runtime splits
    `[lo, hi)` among OpenMP threads (the CPU runtime's thread count, the one
    oneDNN uses) when the work is large enough, and otherwise calls the task
    once on the calling thread. The mark is removed.

    By then every buffer is its LLVM descriptor, so the arguments are
    stored as they are passed: nothing at the memref level can put a memref
    in memory and take it out again.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def GemmOperandsToBF16Pass : Pass<"lstm-gemm-operands-to-bf16"> {
  let summary = "Give fp32 contractions bf16 operands, keeping the fp32 accumulator";
  let description = [{
    The bf16 compute type of the GPU path (`--lstm-to-nvvm=compute-type=bf16`):
    bf16 storage for the GEMM operands (weights and activations) and fp32
    accumulation. Runs on tensors, after `convert-lstm-to-linalg` and before
    bufferization.

    Every linalg contraction (`linalg.matmul`, `linalg.batch_matmul`, or a
    `linalg.generic` that `linalg::isaContractionOpInterface` recognises)
    whose result is f32 and whose inputs are f32 (or already bf16) gets its
    f32 inputs rounded to bf16 (a `linalg.generic` of `arith.truncf`, to
    nearest even) and reads those instead. Named ops multiply mixed operands
    with their cast semantics; a generic contraction's body extends its bf16
    block arguments back to f32 (`arith.extf`), so products and sums stay
    f32. `lstm-gemm-to-cublas` sends the result to cuBLAS with bf16 inputs
    and fp32 accumulation; a product it leaves as a generated kernel reads
    bf16 and computes in f32 alike.

    Each value is converted once, right after its definition (at the top of
    its block for a block argument), whatever the number of contractions
    reading it: weights defined outside the time loop are converted once
    before it, the recurrent state once per step. Contractions with other
    element types (f64, or a bf16 or f16 result) are left alone.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def SplitTF32GemmsPass : Pass<"lstm-split-tf32-gemms"> {
  let summary = "Run fp32 contractions as TF32 products of operands split "
                "in two TF32 parts (3xTF32)";
  let description = [{
    The GEMMs of the fp32 compute type on tensor cores, within fp32's
    tolerance (docs/passes.md, "3xTF32 GEMMs"). Runs on tensors, after
    `convert-lstm-to-linalg` and before bufferization.

    Each f32 value `x` is `x_hi + x_lo`: `x_hi` rounded to TF32 (to
    nearest, ties away from zero), `x_lo = x - x_hi` exact in fp32. A
    contraction `C += A·B` (a `linalg.matmul`, `linalg.batch_matmul` or
    contraction `linalg.generic` of f32 inputs and an f32 accumulator, with
    one row, column and reduction dimension and any batch) of depth K
    becomes the same contraction of depth 3K on `[A_lo | A_hi | A_hi]` and
    `[B_hi ; B_lo ; B_hi]`, the three parts side by side along each
    operand's reduction dimension: `A_lo·B_hi + A_hi·B_lo + A_hi·B_hi`,
    which leaves out `A_lo·B_lo` (at most 2^-22 of the product). The small
    terms come first: tensor cores round their additions toward zero, and
    the error measured 4x smaller that way. Each operand's parts are one
    `linalg.generic` (the operand with one more dimension, of extent 3,
    before its reduction dimension) and a `tensor.collapse_shape`. An
    operand defined outside the innermost loop around its product (a
    weight) is split right after its definition, once; any other right
    before the product, shared with later products of the same block. The
    contraction gets the unit attribute `lstm.tf32_operands`, and
    `lstm-gemm-to-cublas` runs it with TF32 arithmetic whatever its
    `compute-type`; a product left as a generated kernel computes the same
    sum with fp32 FMAs.

    Which products: those with at least `min-rows` rows, as many columns
    and as many terms (fewer rows measured slower than fp32 FMAs; a
    shallower reduction gains less than the splits cost) and, inside a
    loop (a step's product), at least `min-loop-work` multiply-adds, the
    batch's included (a small step's product gains less than its state's
    split costs every step), and at least `min-intensity` multiply-adds
    for each element of the operands it splits at each call (the splits
    read and write memory in proportion to those elements, the tensor
    cores save time in proportion to the multiply-adds: appleyard's weight
    gradients, 2048 x 512 by T·B, at 410 ran slower split). Where an extent
    that decides is dynamic (a
    batch, a weight gradient's steps times batch), an `scf.if` chooses at
    run time between the split product and the product as it was. A zero
    fill of the accumulator that only the product reads moves next to the
    product (its copy in each branch), where `lstm-gemm-to-cublas` folds it
    into the call (beta = 0).

    A step's weights, split before the loops, are split behind the same
    test, built at the function's start from its arguments (ValueBounds
    ties the step's extents to them through the loops), the other branch an
    uninitialised buffer: a call whose batch is below the bounds pays for
    no split. Where ValueBounds cannot follow the loops (a backward loop
    that carries the batch in states that trade their rows), the test reads
    the extents the loops' states have at their start. The step's product
    takes the split version only where that test passed as well as its own,
    so a step never reads weights that were not split. Where no test can be
    built at the start, the product is left alone.

    The error of the tensor cores' additions grows with the depth: about
    2.4e-6 of the result's norm at 1024 terms, 4.8e-6 at 2048, 1.5e-5 at
    6400, against fp32's bound of 1e-5. A reduction deeper than
    `max-depth` is cut into ceil(depth / max-depth) parts of equal depth
    (the last shorter): the first part's split product goes into the
    accumulator as the product did, each other part's is added to it
    (cuBLAS's beta = 1, an fp32 addition). A static depth's parts follow
    one another (a step's weights' parts sliced, and split, before the
    loops); a depth known only at run time (outside loops only) has its
    parts added by an `scf.for`. The parts run one after another, each as
    parallel as the product's outputs: a product of fewer than
    `min-part-outputs` outputs (rows times columns, the batch's included)
    is split only where it is one part (a backward step's `dG·R` at
    B = 128, 128 x 2048 by 8192 terms, took 144 µs in eight parts against
    92 in fp32, where cuBLAS splits the depth over the GPU itself; 128 x
    8192 by 2048 terms, 2^20 outputs, 82 µs in two parts against 94).
    `in-loops` false leaves the products
    inside loops alone altogether. Infinite or
    NaN operands give NaN (`x_lo = inf - inf`) where fp32 FMAs could give an
    infinity.
  }];
  let options = [
    Option<"minRows", "min-rows", "int64_t", /*default=*/"128",
           "Fewest rows, columns and terms of a product that is split">,
    Option<"maxDepth", "max-depth", "int64_t", /*default=*/"1024",
           "Most terms one TF32 product sums: deeper reductions are cut "
           "into parts whose products are added in fp32">,
    Option<"minIntensity", "min-intensity", "int64_t", /*default=*/"512",
           "Fewest multiply-adds of a product that is split for each element "
           "of its operands split at each call: rows·cols/(rows + cols), or "
           "cols (rows) where the second (first) operand is split before "
           "the loops">,
    Option<"minLoopWork", "min-loop-work", "int64_t", /*default=*/"134217728",
           "Fewest multiply-adds (the batch's included) of a product inside "
           "a loop that is split (below 2^31)">,
    Option<"minPartOutputs", "min-part-outputs", "int64_t",
           /*default=*/"1048576",
           "Fewest outputs (rows · columns, the batch's included) of a "
           "product deeper than max-depth, whose parts run one after "
           "another (below 2^31)">,
    Option<"inLoops", "in-loops", "bool", /*default=*/"true",
           "Split the products inside loops too (a step's); false: only "
           "those outside every loop (a sequence's)">
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def TransposeLoopWeightsPass : Pass<"lstm-transpose-loop-weights", "::mlir::ModuleOp"> {
  let summary = "Transpose the weights of a loop's products before the loop "
                "where the runtime measures the transposed layout faster";
  let description = [{
    A gate's product reads its weights as `[N, K]` (`C[b, n] += X[b, k] ·
    W[n, k]`, PyTorch's layout and the one `convert-lstm-to-linalg`
    gives), which cuBLAS multiplies in its "T" form. Stored `[K, N]` (the
    "N" form) they run faster at some shapes and slower at others (H200,
    fp32: a wavefront diagonal's `8 × [64 × 512] · [512 × 2048]` 31.7 µs
    against 34.9, large's `2 × [32 × 2048] · [2048 × 8192]` 54 against 42
    in the network; docs/benchmarks.md, "A step's weights transposed where
    cuBLAS runs them faster"): which, the runtime measures.

    Runs on tensors, after the passes that choose how products run
    (`lstm-split-tf32-gemms`), for the GPU path (its calls go to the CUDA
    runtime). Each f32 contraction inside a loop (`linalg.matmul`,
    `linalg.batch_matmul` or a `linalg.generic` that
    `linalg::isaContractionOpInterface` recognises, not one that
    `lstm-split-tf32-gemms` made for TF32) whose second input is defined
    outside the loop, indexed with the reduction last and the columns
    before it, while the first input is defined in the loop, is rewritten
    so: right before the outermost loop that does not define the weights,
    `lstmRuntimeGemmFasterTransB` gets the product's sizes (built from the
    function's arguments, as `lstm-split-tf32-gemms` builds its test; a
    product whose sizes cannot be built there is left alone) and the
    weights are transposed (their last two dimensions swapped by a
    `linalg.transpose`) where it answers 0; in the loop an `scf.if` on the
    answer runs the product on the transposed weights (the indexing map's
    last two results swapped) or on the weights as they were. One question
    and one transposition serve every product of the loop that reads the
    same weights. Products outside loops (a sequence's projection, the
    weight gradients) are left alone: a transposition would be paid for
    one product.

    Where the product runs only in the `else` branch of an `scf.if` whose
    condition is a value `g` from before the loop, or `g ∧ x` (the fp32
    version that `lstm-split-tf32-gemms` keeps beside a TF32 one, whose
    weights it splits before the loop where `g` holds), the weights are
    transposed only where `g` does not hold either: a call that takes the
    TF32 version does not pay for a transposition it never reads.
    `compute-type` is the products' arithmetic, as `lstm-gemm-to-cublas`
    will run them (what the runtime measures), and `min-size` its
    `min-size`: a product of fewer multiply-adds (`m·n·k·batch`) stays a
    generated kernel, so the runtime is not asked about it (at run time,
    behind an `scf.if`, where the sizes are dynamic).
  }];
  let options = [
    Option<"computeType", "compute-type", "::mlir::lstm::GemmComputeType",
           /*default=*/"::mlir::lstm::GemmComputeType::fp32",
           "The products' arithmetic under cuBLAS: fp32, tf32 or bf16",
           "::mlir::lstm::gemmComputeTypeValues()">,
    Option<"minSize", "min-size", "int64_t", /*default=*/"0",
           "Smallest m·n·k·batch that lstm-gemm-to-cublas sends to cuBLAS">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def ConcatSummedProductsPass : Pass<"lstm-concat-summed-products"> {
  let summary = "Compute two products that an elementwise op adds as one "
                "product of the concatenated operands";
  let description = [{
    A cell adds the product of its input with the input weights to the
    product of its state with the recurrent weights. Where both are computed
    in the loop (a wavefront's diagonal, whose layer l reads layer l-1's
    output of the diagonal before), they are two GEMMs of depth K, each
    zero-filled, whose results the fused cell adds. One GEMM of depth 2K,
    `[X H] · [W R]ᵀ = X·Wᵀ + H·Rᵀ`, takes less time than the two: at
    appleyard's forward diagonal, `4 × [64 × 1024] · [1024 × 2048]` in
    TF32 measured 10.2 µs against 2 × 7.4 µs on its own
    (`bench/micro/gemm_splitk.cu`'s whole batched products); in fp32 it is
    slower on its own (41.5 µs against 2 × 18.6) but the training step,
    whose diagonals read 32 MB of weights each, ran 2.8% faster with it
    (docs/benchmarks.md, "One product a forward diagonal").

    The pass looks for a `linalg.generic` without reductions whose body adds
    two of its inputs (`arith.addf` of two block arguments that nothing else
    uses, read through the same indexing map), each of which is a
    contraction on tensors or an equal `tensor.extract_slice` of one (the
    slice read only there, taking all of each dynamic extent, so that the
    two products' extents are equal): two inputs, a zero-filled init, one reduction
    dimension that both inputs index and the result does not, the same op,
    attributes and body (the depths may differ). Where every use of the two
    products is such a pair in one generic (or a `tensor.dim`), it replaces
    them with one product of the same kind over the operands concatenated
    along the reduction dimension, which each pair's first input reads; the
    addition keeps that input alone. The concatenations (an empty tensor
    and two `tensor.insert_slice`) go right after both operands are defined:
    the weights' once before the loop that reads them. The extents other
    than the reduction's are the first product's operands'; the generic's
    elementwise addition already required them equal.

    The sum is reassociated (`x·w` and `h·r` accumulated in one reduction
    instead of added after two), as any GEMM's blocking reassociates.
    `lstm-to-nvvm` runs it after the pointwise fusion where the GEMMs go to
    cuBLAS, under every compute type.

    With `pad-columns` (the default), the two products may have different
    numbers of columns (static): Cho's GRU's forward diagonal adds the
    reset and update gates' columns of its input product `[3N]` to its
    recurrent product `[2N]` (the third gate's recurrent product reads
    `r ⊙ h`). The narrower product's weights get zero rows for the other
    columns (once, before the loop); the other reads of the wider product
    (slices of columns the narrower has none of, read after the later
    product) read the new one's. That computes zeros. The pairs of two
    products may be added in several generics (Cho's GRU adds its reset
    gate's in one, its update gate's in the next): they are taken
    together. In fp32 the concatenation lost 2.3% of appleyard's Cho GRU
    training step (docs/benchmarks.md, "Cho's GRU: fewer kernels a
    diagonal"); under TF32 it made appleyard's GRU forward 17% faster and
    large's 9% slower (its zeros 16 times as many): `lstm-to-nvvm` leaves
    it out.

    With `split-columns` (the default), where the wider of two such
    products has its other columns (a slice of all of them, read once)
    added in a generic to a third product of as many columns, the wider
    product is first split in two products of its kind, over the rows of
    its weights that make each (sliced once, before the loop): its columns
    that the narrower has, which then combine with the narrower, and the
    others, which combine with the third. Cho's GRU's forward diagonal:
    the input product `[3N]` splits into the reset and update gates'
    `[2N]`, concatenated with the recurrent product, `[X H] · [W_rz
    R_rz]ᵀ`, and the third gate's `[N]`, concatenated with the product of
    `r ⊙ h`, `[X (r ⊙ h)] · [W_n R_n]ᵀ`: two products a diagonal instead of
    three, and no zeros (with `stack-batches`, two batches of equal
    widths instead of one padded). The product of the split that the
    second pair concatenates reads the gathered inputs once more (a copy
    of them into its operand).

    With `stack-batches`, two batched products of equal extents (but for
    the batch: the same depth, columns and rows) run as one batch of both's
    matrices instead, `[X; H] · [W; R]ᵀ` of 2L matrices of depth K: the
    operands are concatenated along the batch dimension (the gather built
    in the first half, the states copied into the second; the weights once
    before the loop) and each read takes its half of the result, which the
    generic still adds. Without tensor cores cuBLAS runs twice the tiles at
    half the depth faster than the deeper product: appleyard's forward
    diagonal, `8 × [64 × 512] · [512 × 2048]` in fp32, 33.7 µs against 42.8
    for the concatenation (GPU time on its own), and the LSTM's training
    step 13.34 → 12.14 ms (docs/benchmarks.md, "The forward diagonal's
    products as one batch; the backward's link product split at the
    gates"); under TF32 the two take the same time.
    `lstm-to-nvvm` stacks under the fp32 compute type, and concatenates
    what it cannot stack.

    With `pad-stacks` too, two products of equal depth whose numbers of
    columns differ are stacked as well: the narrower one's weights get zero
    rows up to the wider one's columns (once, before the loop), both halves
    of the batch have the wider one's columns, and the wider product's
    other reads (its columns that the narrower has none of) read its half.
    Cho's GRU's forward diagonal in fp32, `4 × [64 × 512] · [512 × 1536]`
    and `4 × [64 × 512] · [512 × 1024]`: 34.8 µs as two products, 29.2 as
    one padded batch of eight, 44.1 concatenated (cuBLAS through PyTorch,
    CUDA graphs, H200). `lstm-to-nvvm` pads stacks under fp32.
  }];
  let options = [
    Option<"padColumns", "pad-columns", "bool", /*default=*/"true",
           "Also combine products with different numbers of columns, the "
           "narrower one's weights padded with zeros">,
    Option<"splitColumns", "split-columns", "bool", /*default=*/"true",
           "Where the wider of two products of different widths has its "
           "other columns added to a third product, split it in two so that "
           "both pairs combine without zero weights">,
    Option<"stackBatches", "stack-batches", "bool", /*default=*/"false",
           "Run two batched products of equal extents as one batch of both's "
           "matrices instead of one product of twice the depth">,
    Option<"padStacks", "pad-stacks", "bool", /*default=*/"false",
           "With stack-batches, also stack two products of equal depth whose "
           "numbers of columns differ, the narrower one's weights padded with "
           "zeros (whatever pad-columns says)">
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def SplitBatchedGemmsPass : Pass<"lstm-split-batched-gemms"> {
  let summary = "Split the reduction of deep batched GEMMs into a wider batch "
                "and a sum";
  let description = [{
    A wavefront's batched gate multiplies L matrices of B rows at once: a
    backward stack's link product `[L, B, 4N] × [L, 4N, N + I]` at appleyard
    (L = 4, B = 64, N = 512) is 16 tiles of 32 × 32 per matrix, each through
    all 2048 terms of the reduction. Without tensor cores (the fp32 compute
    type) cuBLAS runs it with 32 × 32 tiles and no split of the reduction
    (cublasLt refuses a split-K algorithm for a strided batch): 63 µs where
    the four matrices split in K would take 39
    (`bench/micro/gemm_splitk.cu`, docs/benchmarks.md, "Split
    reductions").

    This pass rewrites such a `linalg.batch_matmul` on tensors
    (`C[l] += X[l] · W[l]ᵀ`, the form `convert-lstm-to-linalg` gives a
    batched gate) into S times as many products of depth K/S: X and W are
    transposed to `[L, S, ·, K/S]` (W right after its definition, so once
    before a loop that it does not change), multiplied as one batch of L·S
    matrices, and the partial products summed into C by a
    `linalg.generic` (one more kernel). It applies where the reduction is
    at least `min-depth` terms deep and at least `depth-ratio` (1.5) times
    as deep as the result is wide (a forward step's `[L, B, N] × [L, N, 4N]` is left
    alone: its matrices have tiles enough, and split it measured slower;
    Cho's GRU's backward link product `[L, B, 3N] × [L, 2N, 3N]` measured
    faster split);
    where the batch's rows are not static, an
    `scf.if` keeps the product whole below `min-rows` rows (at B = 1 the
    transposition and the sum cost more than the split gains). S is
    `splits`, halved until it divides K into slices of a multiple of 4
    terms (16-byte aligned for cuBLAS).

    Where X is assembled (`tensor.insert_slice`s into the columns of an
    empty tensor) from pieces of equal width that `linalg.generic`s of one
    block compute (a backward cell's gate gradients, assembled into dG),
    and they are at least half as many as the slices above would be (and
    at most twice as many), the reduction is split at the pieces instead
    (S = the number of pieces) and X is not transposed: each generic also
    computes its pieces into their matrices of the split operand, one more
    output each, laid out before the first of them. At appleyard's
    backward diagonal that is 16 matrices of depth 512 (the four gates)
    instead of 32 of depth 256 after a copy kernel: the LSTM's training
    step 12.16 → 12.03 ms; Cho's GRU's three gates (12 matrices of depth
    512 against 32 of 192) measured slower, 15.95 → 16.21 ms, hence the
    bound (docs/benchmarks.md, "The forward diagonal's products as one
    batch; the backward's link product split at the gates").

    Where the product's accumulator is zeros, only elementwise
    `linalg.generic`s read its result (each once, as an input), and X is
    either assembled from pieces as above or computed by an elementwise
    generic, the split needs no kernel of its own: X's slices are written
    by the generic that computes X (a generic reading X at
    `(l, r, s·K/S + j)` for `(l, s, r, j)`, fused into X's by upstream's
    elementwise fusion, X's other results and readers kept), and each
    reader of the product sums the partial products itself (a copy of the
    sum fused into it). Such a split costs only the partial products'
    memory: it has its own bound, `fused-depth-ratio` (1), and no `scf.if`
    on the rows. Cho's GRU's `R_n (r ⊙ h)` (`[L, B, N] × [L, N, N]`, as deep
    as wide) is such a product, in the forward and in the backward: split,
    appleyard's GRU training step 14.57 → 12.88 ms and its forward at
    B = 16, 64, 128 3.70 → 3.61, 5.75 → 5.11, 6.75 → 6.60 ms; large's
    forward at B = 32, 64, 128 8.75 → 8.23, 11.67 → 11.08, 14.88 → 13.81
    ms, its training step unchanged (39.2 → 39.5); appleyard's forward at
    B = 1 and 4 2-3% slower (docs/benchmarks.md, "Cho's GRU's r ⊙ h
    product split without a kernel").

    `lstm-to-nvvm` runs it under the fp32 compute type, after the pointwise
    fusion: with tensor cores (tf32, bf16) the batched product is already
    fast and the split measured slower.
  }];
  let options = [
    Option<"splits", "splits", "int64_t", /*default=*/"8",
           "Slices of the reduction per product">,
    Option<"minDepth", "min-depth", "int64_t", /*default=*/"512",
           "The least reduction depth K that is split">,
    Option<"minRows", "min-rows", "int64_t", /*default=*/"8",
           "The least number of rows B that is split (where the split needs "
           "kernels of its own)">,
    Option<"depthRatio", "depth-ratio", "double", /*default=*/"1.5",
           "The least ratio of depth K to width N that is split where the "
           "split needs kernels of its own">,
    Option<"fusedDepthRatio", "fused-depth-ratio", "double", /*default=*/"1.0",
           "The least ratio of depth K to width N that is split where the "
           "generics around the product take the split's work in">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def WriteSequencesInPlacePass : Pass<"lstm-write-sequences-in-place"> {
  let summary = "Build a loop's sequence in the slice of the tensor it is "
                "inserted into";
  let description = [{
    A layer's lowering builds each output sequence in a tensor of its own
    (`bufferization.alloc_tensor`, the `iter_args` of its time loop). Where
    the sequence then goes whole into a bigger tensor (the store that a
    wavefront's batch-bound `scf.if` yields, which its layers' branch fills
    with their sequences: docs/passes.md), bufferization copies it there
    after the loop. Upstream's `eliminate-empty-tensors` would let the loop
    write the slice itself, but it looks for `tensor.empty` only, and the
    lowering's sequences must stay allocations of their own.

    This pass rewrites `%s = bufferization.alloc_tensor(...)`, the initial
    value of an `scf.for`'s iteration argument whose result is used only by
    a `tensor.insert_slice` into `%d`, into `tensor.extract_slice` of `%d`
    at the insert's offsets and sizes, where `%d` and those values are
    defined before the allocation (the insert is then a copy of the slice
    onto itself, which bufferization drops). The sequence's initial contents
    were undefined, so nothing that the loop may read changes. The same for
    a `tensor.parallel_insert_slice` into a shared output of an
    `scf.forall` (a part of a layer's batch, `lstm-split-batch`, into the
    whole: a training forward's saved activations, its sequences that are
    not views of a state's stack, are built in the whole's rows; 60 → 42
    copies in the CPU training library of `examples/lstm.mlir`). Both
    lowerings run it before bufferization.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def WritePartStacksInPlacePass
    : Pass<"lstm-write-part-stacks-in-place", "::mlir::func::FuncOp"> {
  let summary = "Build each part of a split layer's state stack in the rows "
                "of the whole layer's output";
  let description = [{
    A layer's lowering builds its output sequence as rows `1..T` of a
    state stack `[T + 1, B, N]` whose row 0 is the initial state (each step
    reads the state before it from the row before its own). A part of a
    layer's batch (`lstm-split-batch`: an `scf.forall`, each iteration the
    layer on rows `[lo, lo + m)`) builds its stack in an allocation of its
    own, and the forall's `tensor.parallel_insert_slice` copies its rows
    `1..T` into the whole output `[T, B, N]`: a copy of every layer's
    output after the sequence.

    Where a shared output of an `scf.forall` is a fresh
    `bufferization.alloc_tensor`, its one insert puts rows `1..S` of an
    `scf.for` result of `S + 1` rows (whole in every other dimension) at
    row 0, and that loop starts from a fresh allocation (or from
    `tensor.insert_slice`s into one, the initial state's row), this pass
    gives the output one row more, starts the loop from the part's slice
    `[0, lo, 0] [S + 1, m, N]` of it, inserts the whole stack there, and
    makes what read the output read its rows `1..`, a view after
    bufferization. Each part's row 0 lands in the extra row, within its
    own columns, so the parts still write disjoint slices. The extents are
    compared with the value-bounds analysis.

    A layer's two forms (`lstm-hoist-by-threads`: an `scf.if` on the thread
    count, a split layer in each branch) yield such outputs; the `scf.if`
    then yields the longer tensors and its result is sliced after it. An
    output that leaves the function, or that is yielded anywhere else, stays
    as it is: a function's results have identity layouts, so a view would be
    copied there on one thread, where the parts copy their rows on theirs;
    and a branch's view joined with another's whole tensor would have an
    unknown layout, which the next layer's hoisted projection would copy to
    collapse. The CPU lowering runs the pass after `lstm-split-batch`'s
    layers are lowered, then `lstm-collapse-before-slice` again (the next
    layer's projection collapses the longer tensor and slices it).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def ShareAssembledColumnsPass : Pass<"lstm-share-assembled-columns"> {
  let summary = "Make a tensor assembled from the leading pieces of another a slice of it";
  let description = [{
    A backward cell assembles its gates' gradients with
    `tensor.insert_slice`s of whole rows into the columns (the last
    dimension) of a `tensor.empty`. Cho's GRU's does it twice: all three
    gates' (`dG`, for the input weights' gradient and the link to the layer
    below) and the reset and update gates' (the operand of the recurrent
    product `R_rzᵀ`), which are `dG`'s leading columns. Each assembly is a
    buffer of its own after bufferization, and each piece is copied into
    both: on the GPU, copy kernels a step.

    Where every column of one assembled tensor is a piece that another
    assembled tensor of the same block holds at the same offset plus a
    constant column (every other dimension whole in both), the first is
    replaced by `tensor.extract_slice` of the second at that column, which
    bufferization makes a view. The ops that assemble the second move up to
    the first's first use where they come later and their operands are
    available there (they are pure); otherwise nothing changes. Both
    lowerings run it before bufferization.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def SeparateSharedInitsPass : Pass<"lstm-separate-shared-inits"> {
  let summary = "Give each op that writes a shared empty or filled tensor one of its own";
  let description = [{
    The lowering makes a product's accumulator `linalg.fill` of a
    `tensor.empty` and an elementwise result's init a `tensor.empty`; CSE
    merges those of equal shape, and one value ends up the init of several
    ops that overwrite it. One-shot bufferization then gives them one
    buffer: the first writer overwrites it in place, so the zeros a later
    product accumulates into are copied out beforehand (on the GPU a copy
    kernel), and unrelated results share an allocation, which keeps
    `lstm-elide-copies` from computing any of them where it is copied to.

    For every linalg op with tensor semantics whose init is a
    `tensor.empty`, or a `linalg.fill` of one, that has other uses too, the
    pass clones the empty tensor (and the fill, where the op reads its
    init) right before the op and makes the clone its init, for every such
    writer; originals left unused are erased.
    (`tensor.insert_slice`s into a shared empty tensor stay: that is how a
    value is assembled in a slice of another.) A
    fill next to its product is what the BLAS and cuBLAS call-outs turn
    into beta = 0. No value changes: an empty tensor's contents are
    undefined, and each fill writes the same value. Both lowerings run it
    before bufferization.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def WriteResultsInPlacePass : Pass<"lstm-write-results-in-place"> {
  let summary = "Compute a value that is inserted into a slice in that slice";
  let description = [{
    A wavefront's diagonal computes each saved activation into a tensor of
    its own and then inserts it into the loop-carried store at the
    diagonal's slot: after bufferization, a copy kernel a diagonal.
    Upstream's `eliminate-empty-tensors` leaves these alone where the value
    is also carried on (a cell's new state, which the loop yields) and does
    not follow the `tensor.insert_slice` chains a backward cell assembles
    its gates' gradients with.

    For each `tensor.insert_slice %v into %d[...]` whose destination is
    neither built in an empty tensor nor read by anything else (a layer's
    sequence, whose slot `t` a step reads while it writes slot `t + 1`, is
    left to `lstm-elide-copies`: bufferization cannot tell the slots apart
    and would copy what the step reads), the pass follows `%v` back through the
    destination operands it was built in (an `insert_slice`'s destination, a
    linalg op's init that its body does not read) to the `tensor.empty` (or
    content-less `bufferization.alloc_tensor`) it started from, and makes
    that operand `tensor.extract_slice %d[...]` instead: the insert is then
    a copy of the slice onto itself, which bufferization drops. The empty
    tensor's contents were undefined, so no value changes. Where a value on
    the way is used other than by reading it in place (yielded, written), the
    slice would be copied out again; then, if `%v` is a `linalg.generic`'s
    result built directly in the empty tensor, the generic gets one more
    output, the same value computed into the slice, and the insert takes
    that. Offsets and sizes defined after the chain starts are recomputed
    before it where they are pure ops of values that are available. Both
    lowerings run it before bufferization.
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def LowerDynamicExpandShapePass : Pass<"lstm-lower-dynamic-expand-shape"> {
  let summary = "Rewrite contiguous memref.expand_shape with several dynamic extents per group as memref.reinterpret_cast";
  let description = [{
    Works around a crash of LLVM 22's `expand-strided-metadata` on a
    `memref.expand_shape` whose reassociation group has more than one
    dynamic extent (llvm/llvm-project#186830, fixed for LLVM 23), which is
    what splitting a `[T·B, N]` buffer into `[T, B, N]` with dynamic `T` and
    `B` produces (`lstm-hoist-input-projection`). When source and result
    have identity layouts, the op is rewritten into the equivalent
    row-major `memref.reinterpret_cast` with the op's `output_shape` as
    sizes; other expand_shape ops are left alone. The lowering pipelines run
    it right before `expand-strided-metadata`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // LSTM_CONVERSION_PASSES_TD
