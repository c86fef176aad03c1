//===- UpstreamCAPI.cpp - Upstream's C API for IR as a shared library -----===//
//
// Empty: libLSTMUpstreamCAPI.so is all of libMLIRCAPIIR.a (see
// CMakeLists.txt); a library needs at least one source file.
//
//===----------------------------------------------------------------------===//
