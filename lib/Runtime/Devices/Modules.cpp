//===- Modules.cpp - device code loaded when a kernel is first needed -----===//
//
// Part of Ober-Train's runtime (no MLIR). A KernelModule keeps one loaded
// CUmodule per context and the functions looked up in it, so the lookup
// generated code makes before every launch is a hash lookup.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Devices/Modules.h"
#include "ober/Runtime/Devices/CUDA.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

using namespace ober::rt::cuda;

namespace {
/// A fatbin's first word (fatbinary.h's FATBIN_MAGIC), little-endian.
constexpr uint32_t kFatbinMagic = 0xBA55ED50;
/// Bytes of the driver's PTX compiler log kept for an error message.
constexpr size_t kJitLogBytes = 16384;

/// Every KernelModule alive (the constructor adds it, the destructor
/// removes it), for loadAllHere.
std::mutex liveMutex;
std::set<KernelModule *> &liveModules() {
  static auto *live = new std::set<KernelModule *>; // outlives global_dtors
  return *live;
}

std::mutex namesMutex;
std::unordered_map<CUfunction, std::string> &functionNames() {
  static auto *names = new std::unordered_map<CUfunction, std::string>;
  return *names;
}

bool looksLikeText(const unsigned char *p, size_t size) {
  size_t n = std::min<size_t>(size, 512);
  for (size_t i = 0; i < n; ++i)
    if (p[i] == 0 ? i + 1 != size : !(std::isprint(p[i]) || std::isspace(p[i])))
      return false;
  return n > 0;
}

std::string imageText(ImageFormat format, size_t size) {
  return std::string("the ") + imageFormatName(format) + " image of " +
         std::to_string(size) + " bytes";
}

/// Advice for the load failures a user can do something about.
std::string loadHint(CUresult result) {
  switch (result) {
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
    return "; it has no code for this device's architecture: compile for it "
           "(e.g. nvvm-attach-target chip=sm_90) or embed PTX";
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    return "; its PTX is newer than this driver accepts: update the driver "
           "or lower the PTX version (cubin-features)";
  default:
    return "";
  }
}
} // namespace

const char *ober::rt::cuda::imageFormatName(ImageFormat format) {
  switch (format) {
  case ImageFormat::Fatbin:
    return "fatbin";
  case ImageFormat::Cubin:
    return "cubin";
  case ImageFormat::PTX:
    return "PTX";
  case ImageFormat::Auto:
    break;
  }
  return "auto";
}

ImageFormat ober::rt::cuda::detectImageFormat(const void *image, size_t size) {
  const auto *p = static_cast<const unsigned char *>(image);
  if (!p || size < 4)
    return ImageFormat::Auto;
  uint32_t magic;
  std::memcpy(&magic, p, sizeof(magic));
  if (magic == kFatbinMagic)
    return ImageFormat::Fatbin;
  if (p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F')
    return ImageFormat::Cubin;
  return looksLikeText(p, size) ? ImageFormat::PTX : ImageFormat::Auto;
}

std::string ober::rt::cuda::functionName(CUfunction function) {
  std::lock_guard<std::mutex> lock(namesMutex);
  auto it = functionNames().find(function);
  return it == functionNames().end() ? "" : it->second;
}

std::string ober::rt::cuda::kernelName(CUfunction function) {
  std::string name = functionName(function);
  return name.empty() ? "a kernel" : "kernel '" + name + "'";
}

KernelModule::KernelModule(const void *image, size_t size, ImageFormat format,
                           int jitOptLevel)
    : image(image), bytes(size), jitOptLevel(jitOptLevel) {
  kind = format == ImageFormat::Auto ? detectImageFormat(image, size) : format;
  const char *text = static_cast<const char *>(image);
  if (kind == ImageFormat::PTX && size && text[size - 1] != '\0')
    ptxText.assign(text, size);
  std::lock_guard<std::mutex> live(liveMutex);
  liveModules().insert(this);
}

KernelModule::~KernelModule() {
  {
    std::lock_guard<std::mutex> live(liveMutex);
    liveModules().erase(this);
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (contexts.empty())
    return; // never loaded: leave the driver alone
  // At exit the driver may already be shutting down; nothing to report.
  for (auto &[context, loaded] : contexts)
    driver().cuModuleUnload(loaded.module);
}

bool KernelModule::loaded() const {
  std::lock_guard<std::mutex> lock(mutex);
  return !contexts.empty();
}

CUmodule KernelModule::load() const {
  const DriverApi &d = driver();
  CUmodule module = nullptr;
  CUresult r;
  std::string log;
  switch (kind) {
  case ImageFormat::Fatbin:
    r = d.cuModuleLoadFatBinary(&module, image);
    break;
  case ImageFormat::PTX: {
    log.assign(kJitLogBytes, '\0');
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                              CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                              CU_JIT_OPTIMIZATION_LEVEL};
    void *values[] = {log.data(), reinterpret_cast<void *>(log.size()),
                      reinterpret_cast<void *>(intptr_t(jitOptLevel))};
    unsigned count = jitOptLevel >= 0 ? 3 : 2;
    const void *text = ptxText.empty() ? image : ptxText.c_str();
    r = d.cuModuleLoadDataEx(&module, text, count, options, values);
    log.resize(std::strlen(log.c_str()));
    break;
  }
  default: // a cubin, or whatever the driver recognizes
    r = d.cuModuleLoadData(&module, image);
  }
  if (r != CUDA_SUCCESS)
    throw CudaError("loading " + imageText(kind, bytes) +
                    " failed: " + resultName(r) + loadHint(r) +
                    (log.empty() ? "" : "; PTX compiler log: " + log));
  return module;
}

KernelModule::Loaded &KernelModule::loadedHere() {
  CUcontext context = nullptr;
  check(driver().cuCtxGetCurrent(&context), "cuCtxGetCurrent");
  if (!context)
    context = sharedDevice(0).context();
  Loaded &loaded = contexts[context];
  if (!loaded.module) {
    try {
      loaded.module = load();
    } catch (...) {
      contexts.erase(context);
      throw;
    }
  }
  return loaded;
}

void KernelModule::loadHere() {
  std::lock_guard<std::mutex> lock(mutex);
  loadedHere();
}

std::vector<std::string> KernelModule::loadAllHere() {
  std::vector<std::string> failed;
  std::lock_guard<std::mutex> live(liveMutex);
  for (KernelModule *module : liveModules()) {
    try {
      module->loadHere();
    } catch (const CudaError &e) {
      failed.push_back(e.what());
    }
  }
  return failed;
}

CUfunction KernelModule::getFunction(const std::string &name) {
  const DriverApi &d = driver();
  std::lock_guard<std::mutex> lock(mutex);
  Loaded &loaded = loadedHere();
  auto it = loaded.functions.find(name);
  if (it != loaded.functions.end())
    return it->second;
  CUfunction function = nullptr;
  CUresult r = d.cuModuleGetFunction(&function, loaded.module, name.c_str());
  if (r != CUDA_SUCCESS)
    throw CudaError("kernel '" + name + "' not found in " +
                    imageText(kind, bytes) + ": " + resultName(r));
  loaded.functions.emplace(name, function);
  std::lock_guard<std::mutex> names(namesMutex);
  functionNames()[function] = name;
  return function;
}
