/*===- CudaRuntime.h - C API of the project's CUDA runtime --------*- C -*-===//
 *
 * The runtime implements the `mgpu*` ABI that upstream `gpu-to-llvm` emits
 * (module load, launch, streams, events, memory) on the CUDA driver API.
 * Those entry points return no status, so a failing CUDA call is recorded
 * here instead: the first failure of a thread (the call, its status and
 * message) is kept, later work of the run is skipped, and the caller of a
 * compiled network asks for it when the network returns.
 *
 *===----------------------------------------------------------------------===*/

#ifndef LSTM_RUNTIME_CUDARUNTIME_H
#define LSTM_RUNTIME_CUDARUNTIME_H

#ifdef __cplusplus
extern "C" {
#endif

/// The first CUDA failure recorded on this thread since the last clear, as
/// "cuMemAlloc(...) failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)", or
/// NULL when every call succeeded.
const char *lstmRuntimeLastError(void);

/// Forgets the recorded failure so that the next run starts clean.
void lstmRuntimeClearError(void);

/// Frees device memory returned by a compiled network (its results).
void lstmRuntimeFree(void *devicePointer);

#ifdef __cplusplus
}
#endif

#endif /* LSTM_RUNTIME_CUDARUNTIME_H */
