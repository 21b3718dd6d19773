#include "agent_probe.h"

#include <bpf/bpf.h>
#include <httplib.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace trainscope::soak {
namespace fs = std::filesystem;

std::optional<ProcessUsage> ReadProcessUsage(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  std::ifstream status(dir + "/status");
  if (!status) return std::nullopt;
  ProcessUsage u;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) {
      u.rss_bytes = std::stoull(line.substr(6)) * 1024;
    } else if (line.rfind("RssAnon:", 0) == 0) {
      u.rss_anon_bytes = std::stoull(line.substr(8)) * 1024;
    } else if (line.rfind("RssFile:", 0) == 0) {
      u.rss_file_bytes = std::stoull(line.substr(8)) * 1024;
    }
  }
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir + "/fd", ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    ++u.open_fds;
  }
  if (ec) return std::nullopt;
  return u;
}

namespace {

std::string TypeName(uint32_t type) {
  switch (type) {
    case BPF_MAP_TYPE_HASH:
      return "hash";
    case BPF_MAP_TYPE_ARRAY:
      return "array";
    case BPF_MAP_TYPE_PERCPU_HASH:
      return "percpu_hash";
    case BPF_MAP_TYPE_PERCPU_ARRAY:
      return "percpu_array";
    case BPF_MAP_TYPE_STACK_TRACE:
      return "stack_trace";
    case BPF_MAP_TYPE_LRU_HASH:
      return "lru_hash";
    case BPF_MAP_TYPE_LRU_PERCPU_HASH:
      return "lru_percpu_hash";
    case BPF_MAP_TYPE_RINGBUF:
      return "ringbuf";
    case BPF_MAP_TYPE_PERF_EVENT_ARRAY:
      return "perf_event_array";
    default:
      return "type " + std::to_string(type);
  }
}

bool HasKeysToWalk(uint32_t type) {
  switch (type) {
    case BPF_MAP_TYPE_HASH:
    case BPF_MAP_TYPE_PERCPU_HASH:
    case BPF_MAP_TYPE_LRU_HASH:
    case BPF_MAP_TYPE_LRU_PERCPU_HASH:
    case BPF_MAP_TYPE_STACK_TRACE:
      return true;
    default:
      return false;
  }
}

// map_id of every BPF map fd the process holds (fdinfo has "map_id:").
std::set<uint32_t> MapIdsOf(pid_t pid) {
  std::set<uint32_t> ids;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fdinfo";
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::ifstream in(it->path());
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("map_id:", 0) == 0) {
        ids.insert(static_cast<uint32_t>(std::stoul(line.substr(7))));
      }
    }
  }
  return ids;
}

int64_t CountKeys(int fd, uint32_t key_size) {
  // Keys may be deleted while we walk; a walk that restarts from the
  // beginning (next of a vanished key) is bounded by max_entries * 2.
  std::vector<unsigned char> key(key_size), next(key_size);
  int64_t n = 0;
  void* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, next.data()) == 0) {
    ++n;
    key.swap(next);
    prev = key.data();
    if (n > (int64_t{1} << 26)) break;
  }
  return n;
}

}  // namespace

std::vector<BpfMapCount> AgentBpfMaps(pid_t pid) {
  std::vector<BpfMapCount> out;
  for (uint32_t id : MapIdsOf(pid)) {
    const int fd = bpf_map_get_fd_by_id(id);
    if (fd < 0) continue;
    bpf_map_info info{};
    uint32_t len = sizeof info;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) {
      BpfMapCount m;
      m.id = id;
      m.name = info.name;
      m.type = info.type;
      m.type_name = TypeName(info.type);
      m.max_entries = info.max_entries;
      m.lru = info.type == BPF_MAP_TYPE_LRU_HASH ||
              info.type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
      if (HasKeysToWalk(info.type)) m.entries = CountKeys(fd, info.key_size);
      out.push_back(m);
    }
    close(fd);
  }
  return out;
}

SeriesCount CountSeries(const std::string& metrics,
                        const std::set<std::string>& gone) {
  SeriesCount c;
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("trainscope_", 0) != 0) continue;
    ++c.total;
    // Every quoted label value; exposition escapes make no difference for
    // pod names and uids (no quotes or backslashes in them).
    bool hit = false;
    for (size_t p = line.find("=\""); p != std::string::npos && !hit;
         p = line.find("=\"", p + 2)) {
      const size_t end = line.find('"', p + 2);
      if (end == std::string::npos) break;
      hit = gone.count(line.substr(p + 2, end - p - 2)) > 0;
    }
    if (hit) {
      ++c.of_gone;
      if (c.examples.size() < 5) c.examples.push_back(line);
    }
  }
  return c;
}

std::optional<std::string> HttpGet(int port, const std::string& path) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_connection_timeout(5);
  cli.set_read_timeout(30);
  auto res = cli.Get(path);
  if (!res || res->status != 200) return std::nullopt;
  return res->body;
}

}  // namespace trainscope::soak
