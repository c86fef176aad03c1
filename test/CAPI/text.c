//===- text.c - The compiler on IR text through lstm-c/Text.h -------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What Python's lstmc calls through ctypes (python/lstmc/_lstmc.py), from C:
// verification with the diagnostics as text, a pass pipeline, compilation
// to a library that then exports the function, the defaults as JSON, and
// the failures' messages. Built as lstm-capi-text-test; its argument is a
// scratch directory.
//
//===----------------------------------------------------------------------===//

// RUN: rm -rf %t && mkdir -p %t
// RUN: lstm-capi-text-test %t 2>&1 | FileCheck %s

#include "rnn_module.h"

#include "lstm-c/Text.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static void report(const char *what, int rc, char *error) {
  printf("%s: %d\n%s", what, rc, error ? error : "");
  lstmTextFree(error);
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  char *error = NULL, *output = NULL;

  // CHECK: verify: 0
  int rc = lstmTextVerify(kRNN, strlen(kRNN), &error);
  report("verify", rc, error);
  // CHECK: bad verify: 1
  // CHECK-NEXT: the IR does not parse or verify:
  // CHECK-NEXT: error: custom op 'lstm.nonsense' is unknown
  const char *bad = "func.func @f() {\n  lstm.nonsense\n}\n";
  error = NULL;
  rc = lstmTextVerify(bad, strlen(bad), &error);
  report("bad verify", rc, error);

  // CHECK: transform: 0
  // CHECK: lstm.layer forward
  error = NULL;
  rc = lstmTextTransform(kRNN, strlen(kRNN), "canonicalize", &output, &error);
  report("transform", rc, error);
  printf("%s", output ? output : "(none)\n");
  lstmTextFree(output);
  // CHECK: bad pipeline: 1
  // CHECK-NEXT: pipeline 'no-such-pass' failed:
  // CHECK-NEXT: error: invalid pass pipeline 'no-such-pass'
  error = NULL;
  output = NULL;
  rc = lstmTextTransform(kRNN, strlen(kRNN), "no-such-pass", &output, &error);
  report("bad pipeline", rc, error);

  // An empty option keeps the default; the CPU target here.
  LstmTextCompileOptions options = {0};
  options.target = "cpu";
  char path[4096];
  snprintf(path, sizeof(path), "%s/rnn.so", argv[1]);
  // CHECK: compile: 0
  // CHECK-NEXT: exports _mlir_ciface_forward: yes
  error = NULL;
  rc = lstmTextCompile(kRNN, strlen(kRNN), path, &options, &error);
  report("compile", rc, error);
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  printf("exports _mlir_ciface_forward: %s\n",
         lib && dlsym(lib, "_mlir_ciface_forward") ? "yes" : "no");
  // CHECK: bad target: 1
  // CHECK-NEXT: compiling to {{.*}} failed:
  // CHECK-NEXT: error: {{.*}}tpu
  options.target = "tpu";
  error = NULL;
  rc = lstmTextCompile(kRNN, strlen(kRNN), path, &options, &error);
  report("bad target", rc, error);

  // CHECK: {"target": "cuda", "chip": "sm_90", "features": "+ptx81",
  // "compute_type": "fp32"}
  char *defaults = lstmTextDefaultOptions();
  printf("%s\n", defaults);
  lstmTextFree(defaults);
  return 0;
}
