// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// liblstmc.so links libstdc++ statically. Built against Debian 12's glibc
// (2.36), its std::random_device calls arc4random, which glibc has only
// since 2.36: this definition (local to the library, like every symbol but
// the exported ones) keeps the library loadable with glibc 2.34 and 2.35
// (Ubuntu 22.04). python/CMakeLists.txt.

#include <stddef.h>
#include <stdint.h>
#include <sys/random.h>

uint32_t arc4random(void) {
  uint32_t value;
  while (getrandom(&value, sizeof(value), 0) != (ssize_t)sizeof(value)) {
  }
  return value;
}
