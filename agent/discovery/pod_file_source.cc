#include "discovery/pod_file_source.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "discovery/pod_json.h"

namespace trainscope {
namespace {

double NowUnixSeconds() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

PodFileSource::PodFileSource(PodFileSourceOptions options, PodTable& table)
    : options_(std::move(options)), table_(table) {}

PodFileSource::~PodFileSource() { Stop(); }

PodFileSource::FileVersion PodFileSource::CurrentVersion() const {
  FileVersion v;
  struct stat st {};
  if (::stat(options_.path.c_str(), &st) != 0) return v;
  v.exists = true;
  v.size = static_cast<uintmax_t>(st.st_size);
  v.inode = static_cast<uintmax_t>(st.st_ino);
  v.mtime = std::filesystem::file_time_type(
      std::chrono::seconds(st.st_mtim.tv_sec) +
      std::chrono::nanoseconds(st.st_mtim.tv_nsec));
  return v;
}

size_t PodFileSource::DropPodsOfOtherNodes(PodList& pods) const {
  if (options_.node_name.empty()) return 0;
  return std::erase_if(pods, [this](const PodInfo& pod) {
    return !pod.node.empty() && pod.node != options_.node_name;
  });
}

Status PodFileSource::Load() {
  std::ifstream in(options_.path, std::ios::binary);
  if (!in) {
    return Status::Error("pod file " + options_.path.string() +
                         ": cannot open");
  }
  std::ostringstream body;
  body << in.rdbuf();
  if (in.bad()) {
    return Status::Error("pod file " + options_.path.string() + ": read error");
  }
  PodList pods;
  Status st = ParsePodList(body.str(), &pods, nullptr);
  if (!st.ok()) {
    return Status::Error("pod file " + options_.path.string() + ": " +
                         st.message());
  }
  const size_t elsewhere = DropPodsOfOtherNodes(pods);
  if (elsewhere != skipped_elsewhere_) {
    spdlog::info(
        "[discovery] pod file {}: {} pod(s) scheduled on nodes other "
        "than {} left out",
        options_.path.string(), elsewhere, options_.node_name);
    skipped_elsewhere_ = elsewhere;
  }
  const size_t count = pods.size();
  table_.Replace(
      PreparePodsForPublish(std::move(pods), options_.label_schemes));
  std::lock_guard lock(stats_mu_);
  stats_.ready = true;
  stats_.last_success_unix_seconds = NowUnixSeconds();
  log_limiter_.ClearAll();
  spdlog::debug("[discovery] pod file {}: {} pods", options_.path.string(),
                count);
  return Status::Ok();
}

void PodFileSource::RecordError(const std::string& message) {
  if (auto line = log_limiter_.Pass(message, message)) {
    spdlog::warn("[discovery] {} (keeping the last good pod list)", *line);
  }
  std::lock_guard lock(stats_mu_);
  ++stats_.errors_total;
}

Status PodFileSource::Start() {
  if (thread_.joinable())
    return Status::Error("pod file source: started twice");
  seen_ = CurrentVersion();
  if (!seen_.exists) {
    return Status::Error("pod file " + options_.path.string() +
                         ": does not exist");
  }
  Status st = Load();
  if (!st.ok()) return st;
  spdlog::info("[discovery] watching pod file {}", options_.path.string());
  stop_.Reset();
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

void PodFileSource::Run() {
  while (!stop_.WaitFor(options_.poll_interval)) {
    try {
      FileVersion now = CurrentVersion();
      if (now == seen_) continue;
      seen_ = now;
      // Each distinct version is read once, so a broken file logs once per
      // change rather than once per poll.
      if (!now.exists) {
        RecordError("pod file " + options_.path.string() + ": disappeared");
        continue;
      }
      Status st = Load();
      if (!st.ok()) RecordError(st.message());
    } catch (const std::exception& e) {
      RecordError("pod file " + options_.path.string() +
                  ": unexpected error: " + e.what());
    }
  }
}

void PodFileSource::Stop() {
  stop_.Request();
  if (thread_.joinable()) thread_.join();
}

DiscoveryStats PodFileSource::stats() const {
  std::lock_guard lock(stats_mu_);
  return stats_;
}

}  // namespace trainscope
