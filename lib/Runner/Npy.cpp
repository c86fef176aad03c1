//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Runner/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <sys/resource.h>
#include <unistd.h>

using namespace mlir::lstm;
using llvm::StringRef;

size_t mlir::lstm::dtypeSize(DType dtype) {
  return dtype == DType::f32 || dtype == DType::i32 ? 4 : 8;
}

StringRef mlir::lstm::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::f32:
    return "float32";
  case DType::f64:
    return "float64";
  case DType::i32:
    return "int32";
  case DType::i64:
    return "int64";
  }
  llvm_unreachable("unknown dtype");
}

static StringRef descr(DType dtype) {
  switch (dtype) {
  case DType::f32:
    return "<f4";
  case DType::f64:
    return "<f8";
  case DType::i32:
    return "<i4";
  case DType::i64:
    return "<i8";
  }
  llvm_unreachable("unknown dtype");
}

int64_t Array::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Expected<uint64_t> Array::byteSize() const {
  int64_t bytes = static_cast<int64_t>(dtypeSize(dtype));
  for (int64_t d : shape) {
    if (d < 0)
      return makeError("shape " + shapeString() + " has a negative extent");
    if (llvm::MulOverflow(bytes, d, bytes))
      return makeError("shape " + shapeString() + " of " + dtypeName(dtype) +
                       " is more than 2^63 bytes");
  }
  return static_cast<uint64_t>(bytes);
}

std::string mlir::lstm::formatBytes(uint64_t bytes) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (bytes >= 1000000)
    os << llvm::format("%.1f %s (",
                       bytes >= 1000000000 ? bytes / 1e9 : bytes / 1e6,
                       bytes >= 1000000000 ? "GB" : "MB");
  os << bytes << " bytes";
  if (bytes >= 1000000)
    os << ")";
  return s;
}

uint64_t mlir::lstm::memoryLimit() {
  uint64_t limit = UINT64_MAX;
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0)
    limit = static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize);
  for (int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit rl;
    if (getrlimit(resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
      limit = std::min<uint64_t>(limit, rl.rlim_cur);
  }
  return limit;
}

llvm::Error mlir::lstm::allocateBuffer(std::vector<char> &buffer,
                                       uint64_t bytes,
                                       const llvm::Twine &what) {
  uint64_t limit = memoryLimit();
  if (bytes > limit || bytes > buffer.max_size())
    return makeError(what + " needs " + formatBytes(bytes) +
                     ", more than the " + formatBytes(limit) +
                     " of memory this process may have");
  // Without exceptions, a failing std::vector allocation aborts ("LLVM ERROR:
  // out of memory"): try the allocation first. Untouched, the probe costs an
  // mmap and a munmap.
  if (void *probe = std::malloc(bytes ? bytes : 1))
    std::free(probe);
  else
    return makeError(what + ": cannot allocate " + formatBytes(bytes));
  buffer.resize(bytes);
  return llvm::Error::success();
}

llvm::Error Array::allocate(const llvm::Twine &what) {
  llvm::Expected<uint64_t> bytes = byteSize();
  if (!bytes)
    return makeError(what + ": " + llvm::toString(bytes.takeError()));
  return allocateBuffer(data, *bytes,
                        what + ": shape " + shapeString() + " of " +
                            dtypeName(dtype));
}

std::string Array::shapeString() const {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s.empty() ? "scalar" : s;
}

static llvm::Error fail(StringRef path, const llvm::Twine &msg) {
  return makeError(path + ": " + msg);
}

/// The value of `key` in the header dictionary, up to the next top-level
/// comma or closing brace (the shape tuple is kept whole).
static std::optional<StringRef> headerValue(StringRef header, StringRef key) {
  size_t at = header.find(("'" + key + "'").str());
  if (at == StringRef::npos)
    return std::nullopt;
  StringRef rest = header.drop_front(at + key.size() + 2).ltrim();
  if (!rest.consume_front(":"))
    return std::nullopt;
  rest = rest.ltrim();
  size_t end =
      rest.starts_with("(") ? rest.find(')') + 1 : rest.find_first_of(",}");
  if (end == StringRef::npos || end == 0)
    return std::nullopt;
  return rest.take_front(end).trim();
}

llvm::Expected<Array> mlir::lstm::readNpy(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return fail(path, "cannot read: " + buffer.getError().message());
  StringRef bytes = (*buffer)->getBuffer();
  if (!bytes.starts_with("\x93NUMPY") || bytes.size() < 10)
    return fail(path, "not a .npy file (bad magic)");
  uint8_t major = bytes[6];
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = uint8_t(bytes[8]) | (uint8_t(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return fail(path, "truncated header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= size_t(uint8_t(bytes[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    return fail(path, "unsupported .npy format version " + llvm::Twine(major));
  }
  if (bytes.size() < headerStart + headerLen)
    return fail(path, "truncated header");
  StringRef header = bytes.substr(headerStart, headerLen);

  auto d = headerValue(header, "descr");
  auto order = headerValue(header, "fortran_order");
  auto shape = headerValue(header, "shape");
  if (!d || !order || !shape)
    return fail(path, "malformed header: " + header);

  Array array;
  StringRef dt = d->trim("'\"");
  if (dt == "<f4")
    array.dtype = DType::f32;
  else if (dt == "<f8")
    array.dtype = DType::f64;
  else if (dt == "<i4")
    array.dtype = DType::i32;
  else if (dt == "<i8")
    array.dtype = DType::i64;
  else
    return fail(path, "unsupported dtype '" + dt +
                          "' (expected float32, float64, int32 or int64, "
                          "little-endian)");
  if (*order != "False")
    return fail(path, "Fortran-order arrays are not supported; save a "
                      "C-contiguous array");

  StringRef dims = shape->trim();
  if (!dims.consume_front("(") || !dims.consume_back(")"))
    return fail(path, "malformed shape " + *shape + " (expected a tuple)");
  llvm::SmallVector<StringRef> parts;
  if (!dims.trim().empty()) // "()" is a scalar
    dims.split(parts, ',');
  // "(3,)" has an empty last part; any other empty part is malformed.
  if (parts.size() > 1 && parts.back().trim().empty())
    parts.pop_back();
  for (StringRef p : parts) {
    int64_t v;
    if (p.trim().getAsInteger(10, v) || v < 0)
      return fail(path, "malformed shape " + *shape +
                            " (extents are integers from 0 to 2^63 - 1)");
    array.shape.push_back(v);
  }

  // The size is checked before it is compared: a shape whose byte count
  // wraps around 64 bits would otherwise match a short file.
  llvm::Expected<uint64_t> want = array.byteSize();
  if (!want)
    return fail(path, llvm::toString(want.takeError()));
  StringRef payload = bytes.drop_front(headerStart + headerLen);
  if (payload.size() != *want)
    return fail(path, "holds " + llvm::Twine(payload.size()) +
                          " bytes of data, expected " + llvm::Twine(*want) +
                          " for shape " + array.shapeString() + " of " +
                          dtypeName(array.dtype));
  if (llvm::Error err = array.allocate("the data"))
    return fail(path, llvm::toString(std::move(err)));
  // An empty array's data() may be null, which memcpy must not get even for
  // 0 bytes (UBSan).
  if (!payload.empty())
    std::memcpy(array.data.data(), payload.data(), payload.size());
  return array;
}

llvm::Error mlir::lstm::writeNpy(StringRef path, const Array &array) {
  std::string header = "{'descr': '" + descr(array.dtype).str() +
                       "', 'fortran_order': False, 'shape': (";
  for (int64_t d : array.shape)
    header += std::to_string(d) + ", ";
  if (array.shape.size() > 1)
    header.resize(header.size() - 1); // "(3, 4)" rather than "(3, 4, )"
  if (array.shape.size() > 1)
    header.back() = ')';
  else
    header += ")";
  header += ", }";
  // Pad with spaces so that magic + length + header + '\n' is a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail(path, "cannot write: " + ec.message());
  os << "\x93NUMPY" << char(1) << char(0);
  os << char(header.size() & 0xff) << char(header.size() >> 8);
  os << header;
  os.write(array.data.data(), array.data.size());
  os.close();
  if (os.has_error())
    return fail(path, "write failed: " + os.error().message());
  return llvm::Error::success();
}
