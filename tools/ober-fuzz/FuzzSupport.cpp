//===- FuzzSupport.cpp - what the fuzz targets share ----------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "ober/Runtime/Files.h"

#include <cstdlib>
#include <fstream>
#include <unistd.h>

using namespace ober;

const std::string &fuzz::scratchDir() {
  static const std::string dir = [] {
    const char *tmp = std::getenv("TMPDIR");
    std::string base = tmp && *tmp ? tmp : "/tmp";
    std::string d =
        base + "/ober-fuzz-" + std::to_string(static_cast<long>(getpid()));
    rt::removeTree(d);
    rt::makeDirectories(d);
    std::atexit([] { rt::removeTree(scratchDir()); });
    return d;
  }();
  return dir;
}

std::string fuzz::writeScratch(const std::string &name,
                               const std::string &bytes) {
  std::string path = scratchDir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

std::vector<std::string> fuzz::splitInput(const uint8_t *data, size_t size,
                                          size_t parts) {
  static const std::string kSeparator = "\n--\n";
  std::string all(reinterpret_cast<const char *>(data), size);
  std::vector<std::string> out;
  size_t at = 0;
  while (out.size() + 1 < parts) {
    size_t next = all.find(kSeparator, at);
    if (next == std::string::npos)
      break;
    out.push_back(all.substr(at, next - at));
    at = next + kSeparator.size();
  }
  out.push_back(at <= all.size() ? all.substr(at) : "");
  out.resize(parts);
  return out;
}

std::vector<std::string> fuzz::splitArguments(const uint8_t *data, size_t size,
                                              const std::string &program) {
  std::vector<std::string> args = {program};
  std::string current;
  for (size_t i = 0; i < size && args.size() < 64; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  args.push_back(current);
  return args;
}
