//===- EventFile.cpp - TensorBoard event files ----------------------------===//
//
// Part of Ober-Train's runtime (no MLIR). Records are framed as TensorFlow's
// TFRecord: u64 length, u32 masked CRC-32C of those 8 bytes, the data, u32
// masked CRC-32C of the data. Each record is an `Event` protocol buffer,
// written here field by field: wall_time (1, double), step (2, int64),
// file_version (3, string), summary (5: value (1: tag 1, simple_value 2)),
// session_log (7: status 1 = START).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Tracking.h"

#include "ober/Runtime/Files.h"

#include <array>
#include <chrono>
#include <cstring>
#include <unistd.h>

using namespace ober::rt;

uint32_t ober::rt::crc32c(const void *data, size_t size) {
  // The byte table of the reflected polynomial, made once (thread-safe).
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  const auto *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < size; ++i)
    c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t ober::rt::maskedCrc32c(const void *data, size_t size) {
  uint32_t c = crc32c(data, size);
  return ((c >> 15) | (c << 17)) + 0xA282EAD8u;
}

namespace {
void varint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void tag(std::string &out, int field, int wire) { varint(out, field << 3 | wire); }
void bytesField(std::string &out, int field, const std::string &data) {
  tag(out, field, 2);
  varint(out, data.size());
  out += data;
}
template <typename T> void fixed(std::string &out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}
double now() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
std::string event(int64_t step, bool withStep) {
  std::string e;
  tag(e, 1, 1);
  fixed<double>(e, now());
  if (withStep) {
    tag(e, 2, 0);
    varint(e, static_cast<uint64_t>(step));
  }
  return e;
}
} // namespace

bool EventFile::open(const std::string &dir, int64_t startStep,
                     std::string &error) {
  if (!makeDirectories(dir)) {
    error = "cannot create " + dir;
    return false;
  }
  char host[256] = "localhost";
  gethostname(host, sizeof(host) - 1);
  for (int n = 0;; ++n) {
    char name[512];
    std::snprintf(name, sizeof(name), "%s/events.out.tfevents.%010lld.%s.%d.%d",
                  dir.c_str(), static_cast<long long>(now()), host,
                  static_cast<int>(getpid()), n);
    if (fileSize(name) < 0) {
      file = name;
      break;
    }
  }
  out = std::fopen(file.c_str(), "wb");
  if (!out) {
    error = "cannot create " + file;
    return false;
  }
  std::string first = event(0, false);
  bytesField(first, 3, "brain.Event:2");
  record(first);
  if (startStep >= 0) {
    std::string restart = event(startStep, true);
    bytesField(restart, 7, std::string("\x08\x01", 2));
    record(restart);
  }
  flush();
  return true;
}

void EventFile::scalars(
    int64_t step, const std::vector<std::pair<std::string, double>> &values) {
  if (!out)
    return;
  std::string summary;
  for (const auto &[name, value] : values) {
    std::string v;
    bytesField(v, 1, name);
    tag(v, 2, 5);
    fixed<float>(v, static_cast<float>(value));
    bytesField(summary, 1, v);
  }
  std::string e = event(step, true);
  bytesField(e, 5, summary);
  record(e);
}

void EventFile::record(const std::string &data) {
  std::string framed;
  uint64_t length = data.size();
  fixed<uint64_t>(framed, length);
  fixed<uint32_t>(framed, maskedCrc32c(framed.data(), 8));
  framed += data;
  fixed<uint32_t>(framed, maskedCrc32c(data.data(), data.size()));
  std::fwrite(framed.data(), 1, framed.size(), out);
}

void EventFile::flush() {
  if (out)
    std::fflush(out);
}

EventFile::~EventFile() {
  if (out)
    std::fclose(out);
}
