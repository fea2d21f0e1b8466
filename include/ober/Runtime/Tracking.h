//===- Tracking.h - a run's metrics where users' tools read them -*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). Rank 0 of a training run with
// `--log-dir DIR` writes, every step, the same scalars to
//
//   DIR/metrics.jsonl         one JSON object per step ({"step": i, ...});
//   DIR/tensorboard/events.out.tfevents.<time>.<host>.<pid>.<n>
//                             TensorBoard's event records (CRC-32C framed);
//   DIR/mlruns/0/<run id>/    an MLflow file store run (`mlflow ui
//                             --backend-store-uri DIR/mlruns`): meta.yaml,
//                             params/, metrics/<key>, tags/.
//
// A resumed run continues the same MLflow run (its id is kept in
// DIR/run_id), drops what the earlier run logged from the resumed step on,
// and starts a new TensorBoard file whose first event marks the restart.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_TRACKING_H
#define OBER_RUNTIME_TRACKING_H

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ober::rt {

/// CRC-32C (Castagnoli) of `size` bytes, and TensorBoard's masked form.
uint32_t crc32c(const void *data, size_t size);
uint32_t maskedCrc32c(const void *data, size_t size);

/// One TensorBoard event file.
class EventFile {
public:
  /// Creates a file in folder `dir` (made if missing); `startStep` >= 0
  /// marks a restart at that step. False with `error` on failure.
  bool open(const std::string &dir, int64_t startStep, std::string &error);
  /// Appends one scalar per tag at `step`.
  void scalars(int64_t step,
               const std::vector<std::pair<std::string, double>> &values);
  void flush();
  const std::string &path() const { return file; }
  ~EventFile();

private:
  void record(const std::string &data);
  std::string file;
  std::FILE *out = nullptr;
};

class Tracker {
public:
  /// Starts (or, when `resumeStep` > 0, continues) the run in `dir` with
  /// `params` (name -> value). False with `error` naming the folder.
  bool open(const std::string &dir, const std::string &runName,
            const std::map<std::string, std::string> &params,
            int64_t resumeStep, std::string &error);
  /// Logs `values` (key -> value) at `step`.
  void log(int64_t step,
           const std::vector<std::pair<std::string, double>> &values);
  /// Marks the run finished (or failed) and closes it.
  void close(bool finished);
  bool active() const { return !dir.empty(); }
  const std::string &runId() const { return id; }

private:
  void writeRunMeta(int status, int64_t endTime);
  std::string dir, id, name, runDir, experimentDir;
  int64_t startTime = 0;
  std::FILE *jsonl = nullptr;
  EventFile events;
  int64_t lastFlush = 0;
};

} // namespace ober::rt

#endif // OBER_RUNTIME_TRACKING_H
