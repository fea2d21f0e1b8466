//===- Tracker.cpp - MLflow file store, metrics.jsonl, TensorBoard --------===//
//
// Part of Ober-Train's runtime (no MLIR). The MLflow layout is the file
// store's (mlflow/store/tracking/file_store.py): experiment 0 ("Default")
// with its meta.yaml, a run folder named by its 32-hex id holding
// meta.yaml (status 1 running, 3 finished, 4 failed), params/<key> (the
// raw value), tags/<key>, metrics/<key> ("<ms> <value> <step>" lines) and
// artifacts/, and the store's .trash folder.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Tracking.h"

#include "ober/Runtime/Files.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace ober::rt;

namespace {
int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string absolute(const std::string &path) {
  if (!path.empty() && path[0] == '/')
    return path;
  char cwd[4096];
  return std::string(getcwd(cwd, sizeof(cwd)) ? cwd : ".") + "/" + path;
}

/// The text of `path` ("" when unreadable).
std::string readText(const std::string &path) {
  std::string text;
  readTextFile(path, text);
  return text;
}

std::string newRunId() {
  std::random_device device;
  std::mt19937_64 gen((static_cast<uint64_t>(device()) << 32) ^ device() ^
                      static_cast<uint64_t>(nowMs()));
  char id[33];
  std::snprintf(id, sizeof(id), "%016llx%016llx",
                static_cast<unsigned long long>(gen()),
                static_cast<unsigned long long>(gen()));
  return id;
}

/// A value as JSON (NaN and infinities as Python's json writes them).
std::string number(double v) {
  if (std::isnan(v))
    return "NaN";
  if (std::isinf(v))
    return v > 0 ? "Infinity" : "-Infinity";
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", v);
  return text;
}

/// Keeps the lines of `path` for which `keep(line)` holds.
template <typename Keep> void filterLines(const std::string &path, Keep keep) {
  std::istringstream in(readText(path));
  std::string line, kept;
  while (std::getline(in, line))
    if (keep(line))
      kept += line + "\n";
  writeTextFile(path, kept);
}
} // namespace

bool Tracker::open(const std::string &folder, const std::string &runName,
                   const std::map<std::string, std::string> &params,
                   int64_t resumeStep, std::string &error) {
  std::string root = absolute(folder);
  std::string store = root + "/mlruns";
  experimentDir = store + "/0";
  if (!makeDirectories(experimentDir) || !makeDirectories(store + "/.trash")) {
    error = "cannot create " + experimentDir + " (--log-dir)";
    return false;
  }
  int64_t now = nowMs();
  if (fileSize(experimentDir + "/meta.yaml") < 0 &&
      !writeTextFile(experimentDir + "/meta.yaml",
                 "artifact_location: file://" + experimentDir +
                     "\ncreation_time: " + std::to_string(now) +
                     "\nexperiment_id: '0'\nlast_update_time: " +
                     std::to_string(now) +
                     "\nlifecycle_stage: active\nname: Default\n")) {
    error = "cannot write " + experimentDir + "/meta.yaml";
    return false;
  }
  // A resumed run continues the run it resumes.
  std::string previous = readText(root + "/run_id");
  while (!previous.empty() && (previous.back() == '\n' || previous.back() == ' '))
    previous.pop_back();
  bool continues = resumeStep > 0 && previous.size() == 32 &&
                   fileSize(experimentDir + "/" + previous + "/meta.yaml") >= 0;
  id = continues ? previous : newRunId();
  name = runName;
  runDir = experimentDir + "/" + id;
  startTime = now;
  if (continues) {
    std::istringstream meta(readText(runDir + "/meta.yaml"));
    std::string line;
    while (std::getline(meta, line))
      if (line.rfind("start_time: ", 0) == 0)
        startTime = std::atoll(line.c_str() + 12);
  }
  for (const char *sub : {"/metrics", "/params", "/tags", "/artifacts"})
    if (!makeDirectories(runDir + sub)) {
      error = "cannot create " + runDir + sub + " (--log-dir)";
      return false;
    }
  if (!replaceFile(root + "/run_id", id + "\n")) {
    error = "cannot write " + root + "/run_id (--log-dir)";
    return false;
  }
  for (const auto &[key, value] : params)
    writeTextFile(runDir + "/params/" + key, value);
  writeTextFile(runDir + "/tags/mlflow.runName", name);
  writeRunMeta(1, -1);
  // What the earlier run logged from the resumed step on goes.
  std::string jsonlPath = root + "/metrics.jsonl";
  if (continues) {
    for (const std::string &key : listDirectory(runDir + "/metrics"))
      filterLines(runDir + "/metrics/" + key, [&](const std::string &line) {
        size_t last = line.rfind(' ');
        return last != std::string::npos &&
               std::atoll(line.c_str() + last + 1) < resumeStep;
      });
    filterLines(jsonlPath, [&](const std::string &line) {
      size_t at = line.find("\"step\": ");
      return at != std::string::npos &&
             std::atoll(line.c_str() + at + 8) < resumeStep;
    });
  } else {
    writeTextFile(jsonlPath, "");
  }
  jsonl = std::fopen(jsonlPath.c_str(), "ab");
  if (!jsonl) {
    error = "cannot write " + jsonlPath + " (--log-dir)";
    return false;
  }
  dir = root;
  return events.open(root + "/tensorboard", continues ? resumeStep : -1,
                     error);
}

void Tracker::writeRunMeta(int status, int64_t endTime) {
  writeTextFile(runDir + "/meta.yaml",
            "artifact_uri: file://" + runDir + "/artifacts\nend_time: " +
                (endTime < 0 ? std::string("null") : std::to_string(endTime)) +
                "\nentry_point_name: ''\nexperiment_id: '0'\n"
                "lifecycle_stage: active\nrun_id: " +
                id + "\nrun_name: " + name + "\nrun_uuid: " + id +
                "\nsource_name: ''\nsource_type: 4\nsource_version: ''\n"
                "start_time: " +
                std::to_string(startTime) + "\nstatus: " +
                std::to_string(status) + "\ntags: []\nuser_id: " +
                (std::getenv("USER") ? std::getenv("USER") : "ober") + "\n");
}

void Tracker::log(int64_t step,
                  const std::vector<std::pair<std::string, double>> &values) {
  if (!active())
    return;
  int64_t now = nowMs();
  std::string line = "{\"step\": " + std::to_string(step);
  for (const auto &[key, value] : values) {
    line += ", \"" + key + "\": " + number(value);
    std::FILE *f = std::fopen((runDir + "/metrics/" + key).c_str(), "ab");
    if (f) {
      std::fprintf(f, "%lld %s %lld\n", static_cast<long long>(now),
                   number(value).c_str(), static_cast<long long>(step));
      std::fclose(f);
    }
  }
  std::fprintf(jsonl, "%s}\n", line.c_str());
  events.scalars(step, values);
  if (now - lastFlush > 2000) {
    std::fflush(jsonl);
    events.flush();
    lastFlush = now;
  }
}

void Tracker::close(bool finished) {
  if (!active())
    return;
  writeRunMeta(finished ? 3 : 4, nowMs());
  std::fclose(jsonl);
  jsonl = nullptr;
  events.flush();
  dir.clear();
}
