// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a persistent kernel's step exchange costs when the blocks that
// depend on each other are few: one grid-wide barrier (what
// lstm-lower-grid-barriers generates), a counter per group of blocks (the
// same barrier among the blocks of one tile of rows only), and a thread
// block cluster's hardware barrier (sm_90), with the group's data passed
// through global memory (L2) or through the cluster's distributed shared
// memory. Each iteration every block writes its slice (`floats` / group
// floats) of the group's data, synchronises with its group, then copies the
// whole group's data (`floats` floats) into its shared memory: the state
// exchange of a step. Best of five launches of 20000 iterations, in
// microseconds per iteration.
//   nvcc -O3 -arch=sm_90 -o cluster_barrier bench/micro/cluster_barrier.cu &&
//   ./cluster_barrier
#include "cuda_check.h"
#include "grid_arrive_wait.h"

#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
namespace cg = cooperative_groups;

enum Variant { Grid, Group, ClusterGlobal, ClusterShared };

constexpr int kMaxFloats = 8192;

template <Variant V>
__global__ void exchange(unsigned *counters, float *buffers, int iters,
                         int group, int floats, float *sink) {
  extern __shared__ float staged[]; // [2][kMaxFloats] for ClusterShared
  int block = blockIdx.x;
  int inGroup = block % group, groupId = block / group;
  int slice = floats / group > 0 ? floats / group : 1;
  unsigned *counter = counters + (V == Group ? groupId * 32 : 0);
  unsigned arrivals = V == Group ? group : gridDim.x;
  float acc = threadIdx.x;
  for (int k = 1; k <= iters; ++k) {
    int cur = k & 1;
    float *groupData =
        buffers + (size_t(cur) * gridDim.x / group + groupId) * floats;
    // This block's slice of the group's data.
    for (int i = threadIdx.x; i < floats / group; i += blockDim.x) {
      float v = acc + i;
      if (V == ClusterShared)
        staged[cur * kMaxFloats + inGroup * slice + i] = v;
      else
        groupData[inGroup * slice + i] = v;
    }
    if (V == ClusterGlobal || V == ClusterShared) {
      cg::this_cluster()
          .sync(); // barrier.cluster.arrive.release + wait.acquire
    } else {
      __syncthreads();
      if (threadIdx.x == 0)
        gridArriveWait(counter, k * arrivals);
      __syncthreads();
    }
    // The whole group's data, staged.
    float sum = 0;
    if (V == ClusterShared) {
      cg::cluster_group cluster = cg::this_cluster();
      for (int i = threadIdx.x; i < floats; i += blockDim.x) {
        float *peer =
            cluster.map_shared_rank(staged + cur * kMaxFloats, i / slice);
        sum += peer[i];
      }
    } else {
      for (int i = threadIdx.x; i < floats; i += blockDim.x)
        sum += __ldcg(groupData + i);
    }
    acc = acc * 0.5f + sum * 1e-9f;
    __syncthreads();
  }
  // A block's shared memory must outlive its peers' last reads of it.
  if (V == ClusterGlobal || V == ClusterShared)
    cg::this_cluster().sync();
  if (acc == -1.f)
    *sink = acc;
}

template <Variant V>
float run(int blocks, int threads, int group, int floats, int iters) {
  unsigned *counters;
  float *buffers, *sink;
  CHECK(cudaMalloc(&counters, 4 * 32 * blocks));
  CHECK(cudaMalloc(&buffers, sizeof(float) * 2 * blocks / group * floats));
  CHECK(cudaMalloc(&sink, 4));
  size_t smem = V == ClusterShared ? 2 * kMaxFloats * sizeof(float) : 0;
  CHECK(cudaFuncSetAttribute(
      exchange<V>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = smem;
  cudaLaunchAttribute attribute[1];
  if (V == ClusterGlobal || V == ClusterShared) {
    CHECK(cudaFuncSetAttribute(
        exchange<V>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    attribute[0].id = cudaLaunchAttributeClusterDimension;
    attribute[0].val.clusterDim.x = group;
    attribute[0].val.clusterDim.y = 1;
    attribute[0].val.clusterDim.z = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
    int clusters = 0;
    CHECK(cudaOccupancyMaxActiveClusters(&clusters, exchange<V>, &config));
    if (clusters * group < blocks)
      return -float(clusters); // not all resident
  } else {
    attribute[0].id = cudaLaunchAttributeCooperative;
    attribute[0].val.cooperative = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
  }
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  float best = 1e30f;
  for (int rep = 0; rep < 5; ++rep) {
    CHECK(cudaMemset(counters, 0, 4 * 32 * blocks));
    CHECK(cudaEventRecord(a));
    CHECK(cudaLaunchKernelEx(&config, exchange<V>, counters, buffers, iters,
                             group, floats, sink));
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    best = ms < best ? ms : best;
  }
  CHECK(cudaFree(counters));
  CHECK(cudaFree(buffers));
  CHECK(cudaFree(sink));
  return best * 1000.f / iters;
}

int main() {
  int iters = 20000;
  printf("%6s %6s %7s %6s %8s %8s %8s %8s\n", "blocks", "group", "threads",
         "floats", "grid", "group", "clus-L2", "clus-smem");
  for (int threads : {256, 512})
    for (int group : {2, 4, 8, 16})
      for (int floats : {0, 512, 2048, 6400}) {
        int blocks = 128 / group * group;
        if (group == 16)
          blocks = 112; // 7 clusters of 16: what an H100 holds at once
        printf("%6d %6d %7d %6d %8.3f %8.3f %8.3f %8.3f\n", blocks, group,
               threads, floats,
               run<Grid>(blocks, threads, group, floats, iters),
               run<Group>(blocks, threads, group, floats, iters),
               run<ClusterGlobal>(blocks, threads, group, floats, iters),
               run<ClusterShared>(blocks, threads, group, floats, iters));
      }
}
