#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "discovery/discovery_config.h"
#include "discovery/pod_source.h"
#include "discovery/roles.h"
#include "discovery/stop_signal.h"
#include "trainscope/log_limiter.h"
#include "trainscope/pod.h"

namespace trainscope {

struct PodFileSourceOptions {
  std::filesystem::path path;
  std::chrono::milliseconds poll_interval{1000};
  std::vector<LabelScheme> label_schemes = DefaultLabelSchemes();
  // This node: a pod whose spec.nodeName names another node is not
  // published (a PodList dumped from the whole cluster would otherwise make
  // every node export every pod). A pod without nodeName is kept. "" keeps
  // every pod.
  std::string node_name;
};

// `file` discovery: a PodList JSON file, re-read whenever its mtime, size or
// inode changes (editors and `mv` replace the inode). A bad version of the
// file keeps the last good list.
class PodFileSource : public PodSource {
 public:
  PodFileSource(PodFileSourceOptions options, PodTable& table);
  ~PodFileSource() override;

  std::string_view name() const override {
    return NameOfEnum(kDiscoveryModeNames, DiscoveryMode::kFile);
  }
  Status Start() override;
  void Stop() override;
  DiscoveryStats stats() const override;

 private:
  struct FileVersion {
    bool exists = false;
    std::filesystem::file_time_type mtime{};
    uintmax_t size = 0;
    uintmax_t inode = 0;
    bool operator==(const FileVersion&) const = default;
  };

  FileVersion CurrentVersion() const;
  // Reads and publishes; on failure leaves the table untouched.
  Status Load();
  // Removes the pods spec.nodeName puts on another node; how many.
  size_t DropPodsOfOtherNodes(PodList& pods) const;
  void Run();
  void RecordError(const std::string& message);

  const PodFileSourceOptions options_;
  PodTable& table_;
  StopSignal stop_;
  std::thread thread_;
  FileVersion seen_;              // owned by the thread after Start
  LogLimiter log_limiter_;        // a file rewritten broken again and again
  size_t skipped_elsewhere_ = 0;  // last count logged (Start, then the thread)

  mutable std::mutex stats_mu_;
  DiscoveryStats stats_;
};

}  // namespace trainscope
