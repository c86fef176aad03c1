//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//

#include "lstm/Runner/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

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

std::string Array::shapeString() const {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s.empty() ? "scalar" : s;
}

static llvm::Error fail(StringRef path, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ": " + msg);
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

  StringRef dims = shape->trim().drop_front().drop_back();
  llvm::SmallVector<StringRef> parts;
  dims.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef p : parts) {
    int64_t v;
    if (p.trim().getAsInteger(10, v) || v < 0)
      return fail(path, "malformed shape " + *shape);
    array.shape.push_back(v);
  }

  size_t want = size_t(array.numElements()) * dtypeSize(array.dtype);
  StringRef payload = bytes.drop_front(headerStart + headerLen);
  if (payload.size() != want)
    return fail(path, "holds " + llvm::Twine(payload.size()) +
                          " bytes of data, expected " + llvm::Twine(want) +
                          " for shape " + array.shapeString());
  array.data.assign(payload.begin(), payload.end());
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
