//===- Files.cpp - durable files and folders ------------------------------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Files.h"

#include <algorithm>
#include <cstdio>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace ober::rt;

bool ober::rt::makeDirectories(const std::string &path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string partial = path.substr(0, slash);
    if (!partial.empty())
      mkdir(partial.c_str(), 0777);
    if (slash == std::string::npos)
      break;
    start = slash + 1;
  }
  return isDirectory(path);
}

bool ober::rt::syncPath(const std::string &path) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return false;
  bool ok = fsync(fd) == 0;
  close(fd);
  return ok;
}

std::vector<std::string> ober::rt::listDirectory(const std::string &path) {
  std::vector<std::string> names;
  if (DIR *dir = opendir(path.c_str())) {
    while (dirent *e = readdir(dir)) {
      std::string name = e->d_name;
      if (name != "." && name != "..")
        names.push_back(name);
    }
    closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void ober::rt::removeTree(const std::string &path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0)
    return;
  if (S_ISDIR(st.st_mode)) {
    for (const std::string &name : listDirectory(path))
      removeTree(path + "/" + name);
    rmdir(path.c_str());
    return;
  }
  unlink(path.c_str());
}

bool ober::rt::isDirectory(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

int64_t ober::rt::fileSize(const std::string &path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return -1;
  return static_cast<int64_t>(st.st_size);
}

uint64_t ober::rt::hashFileValue(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return 0;
  uint64_t h = 1469598103934665603ull;
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h ^= static_cast<unsigned char>(buffer[i]);
      h *= 1099511628211ull;
    }
  }
  return h;
}

std::string ober::rt::hashFile(const std::string &path) {
  if (fileSize(path) < 0)
    return "";
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx",
                static_cast<unsigned long long>(hashFileValue(path)));
  return text;
}

bool ober::rt::readTextFile(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in || isDirectory(path))
    return false;
  std::ostringstream os;
  os << in.rdbuf();
  out = os.str();
  return true;
}

bool ober::rt::writeTextFile(const std::string &path, const std::string &text,
                             bool sync) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out || !(out << text) || !out.flush())
      return false;
  }
  return !sync || syncPath(path);
}

bool ober::rt::replaceFile(const std::string &path, const std::string &text) {
  std::string tmp = path + ".tmp";
  if (!writeTextFile(tmp, text, /*sync=*/true) ||
      std::rename(tmp.c_str(), path.c_str()) != 0)
    return false;
  size_t slash = path.rfind('/');
  return syncPath(slash == std::string::npos ? "." : path.substr(0, slash));
}

int64_t ober::rt::availableHostBytes() {
  int64_t bytes = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  while (meminfo >> key >> kb) {
    if (key == "MemAvailable:") {
      bytes = kb * 1024;
      break;
    }
    meminfo.ignore(256, '\n');
  }
  if (bytes <= 0)
    bytes = int64_t(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    bytes = std::min<int64_t>(bytes, static_cast<int64_t>(limit.rlim_cur));
  return bytes;
}
