//===- Files.h - durable files and folders ----------------------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). What an atomic checkpoint needs of
// the file system: folders made with their parents, data forced to disk
// (files and the folders that name them), whole trees removed, a hash of a
// file's bytes, and a small text file replaced in one rename; and how much
// memory the process can still get, checked before large allocations.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_FILES_H
#define OBER_RUNTIME_FILES_H

#include <cstdint>
#include <string>
#include <vector>

namespace ober::rt {

/// `mkdir -p`; true when `path` is a folder afterwards.
bool makeDirectories(const std::string &path);
/// Forces `path` (a file or a folder) to disk; false when it cannot.
bool syncPath(const std::string &path);
/// Removes `path` and everything below it (no error when missing).
void removeTree(const std::string &path);
/// The names in folder `path` (not `.`, `..`), sorted; empty when none.
std::vector<std::string> listDirectory(const std::string &path);
/// The size of file `path`, or -1.
int64_t fileSize(const std::string &path);
/// Whether `path` is a folder (which opens as a stream, then throws at the
/// first read).
bool isDirectory(const std::string &path);
/// FNV-1a (64 bits) of the bytes of `path`, as 16 hex digits ("" when
/// unreadable).
std::string hashFile(const std::string &path);
/// FNV-1a of the bytes of `path` as a number (0 when unreadable).
uint64_t hashFileValue(const std::string &path);
/// The bytes of file `path` into `out`; false when unreadable.
bool readTextFile(const std::string &path, std::string &out);
/// Writes `text` as file `path` (replacing it), forced to disk when `sync`.
bool writeTextFile(const std::string &path, const std::string &text,
                   bool sync = false);
/// Writes `text` to `path` through a temporary file, synced, then renamed
/// over it.
bool replaceFile(const std::string &path, const std::string &text);

/// Bytes this process can still get: the memory the kernel says is
/// available (MemAvailable; else the physical memory), or less under an
/// address-space limit.
int64_t availableHostBytes();

} // namespace ober::rt

#endif // OBER_RUNTIME_FILES_H
