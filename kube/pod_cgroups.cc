#include "kube/pod_cgroups.h"

#include <algorithm>
#include <array>
#include <set>
#include <sstream>
#include <system_error>

#include "spdlog/spdlog.h"
#include "trainscope/file_util.h"

namespace trainscope {
namespace fs = std::filesystem;
namespace {

// Kubelet puts pods at most a few levels below its cgroup root, and that root
// may itself be nested (kind, systemd slices); deeper trees are not walked.
constexpr int kMaxScanDepth = 8;
constexpr size_t kContainerIdLength = 64;

constexpr std::array<std::string_view, 15> kV1Controllers = {
    "blkio",      "cpu",     "cpuacct", "cpuset",  "devices",
    "freezer",    "hugetlb", "memory",  "net_cls", "net_prio",
    "perf_event", "pids",    "rdma",    "misc",    "systemd"};

bool IsHex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

bool IsContainerId(std::string_view s) {
  return s.size() == kContainerIdLength && IsHex(s);
}

// Pod UIDs are UUIDs (36 chars with dashes); static pods use a 32-hex hash.
std::optional<std::string> NormalizeUid(std::string_view raw, char separator) {
  if (raw.size() < 32 || raw.size() > 36) return std::nullopt;
  std::string uid(raw);
  for (char& c : uid) {
    if (c == separator) {
      c = '-';
    } else if (!IsHex(std::string_view(&c, 1))) {
      return std::nullopt;
    }
  }
  return uid;
}

struct PodDirName {
  std::string uid;
  std::string qos;  // empty when the parent decides (cgroupfs driver)
};

// systemd driver: "<prefix>kubepods[-<qos>]-pod<uid_>.slice", where the
// prefix is the slice path of a custom kubelet root ("kubelet-").
std::optional<PodDirName> ParseSystemdPodDir(std::string_view name) {
  if (!name.ends_with(".slice")) return std::nullopt;
  name.remove_suffix(6);
  const auto pod = name.rfind("-pod");
  if (pod == std::string_view::npos) return std::nullopt;
  auto uid = NormalizeUid(name.substr(pod + 4), '_');
  if (!uid) return std::nullopt;
  const auto head = name.substr(0, pod);
  for (std::string_view qos : {"burstable", "besteffort", ""}) {
    std::string tail = "kubepods";
    if (!qos.empty()) tail += "-" + std::string(qos);
    if (head == tail || head.ends_with("-" + tail)) {
      return PodDirName{*uid, qos.empty() ? "guaranteed" : std::string(qos)};
    }
  }
  return std::nullopt;
}

std::optional<PodDirName> ParsePodDir(std::string_view name) {
  if (auto systemd = ParseSystemdPodDir(name)) return systemd;
  if (!name.starts_with("pod")) return std::nullopt;
  auto uid = NormalizeUid(name.substr(3), '-');
  if (!uid) return std::nullopt;
  return PodDirName{*uid, ""};
}

// cgroupfs driver: pods live in "kubepods/pod<uid>" (Guaranteed) or
// "kubepods/<qos>/pod<uid>"; returns the QoS, or empty when the parents do
// not look like kubelet's.
std::string CgroupfsQos(const fs::path& parent) {
  const auto name = parent.filename().string();
  if (name == "kubepods") return "guaranteed";
  if ((name == "burstable" || name == "besteffort") &&
      parent.parent_path().filename() == "kubepods") {
    return name;
  }
  return {};
}

std::vector<ContainerCgroup> ScanContainers(const fs::path& root,
                                            const fs::path& pod_dir) {
  std::vector<ContainerCgroup> out;
  std::error_code ec;
  for (fs::directory_iterator it(pod_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
    auto container = ContainerFromDirName(it->path().filename().string());
    if (!container) continue;
    container->relative_path = it->path().lexically_relative(root).string();
    out.push_back(std::move(*container));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

void Walk(const fs::path& root, const fs::path& dir, int depth,
          std::vector<PodCgroup>& out) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    spdlog::debug("[cgroup] cannot list {}: {}", dir.string(), ec.message());
    return;
  }
  for (fs::directory_iterator end; !ec && it != end; it.increment(ec)) {
    // Symlinks are not followed: co-mounted v1 controllers link to each other.
    if (it->is_symlink(ec) || !it->is_directory(ec)) continue;
    const auto& path = it->path();
    const auto pod = ParsePodDir(path.filename().string());
    std::string qos = pod ? pod->qos : std::string();
    if (pod && qos.empty()) qos = CgroupfsQos(dir);
    if (pod && !qos.empty()) {
      out.push_back(PodCgroup{pod->uid, qos,
                              path.lexically_relative(root).string(),
                              ScanContainers(root, path)});
    } else if (depth < kMaxScanDepth) {
      Walk(root, path, depth + 1, out);
    }
  }
}

bool Exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

bool IsKnownController(std::string_view name) {
  return name.starts_with("name=") ||
         std::find(kV1Controllers.begin(), kV1Controllers.end(), name) !=
             kV1Controllers.end();
}

std::set<std::string> SplitWords(const std::string& s) {
  std::set<std::string> out;
  std::istringstream in(s);
  for (std::string word; in >> word;) out.insert(word);
  return out;
}

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const auto comma = s.find(',', start);
    const auto end = comma == std::string::npos ? s.size() : comma;
    if (end > start) out.push_back(s.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

CgroupHierarchies DetectHierarchies(const fs::path& cgroup_root) {
  CgroupHierarchies out;
  if (auto controllers = ReadSmallFile(cgroup_root / "cgroup.controllers")) {
    out.unified = cgroup_root;
    out.unified_controllers = SplitWords(*controllers);
    return out;
  }
  if (auto controllers =
          ReadSmallFile(cgroup_root / "unified" / "cgroup.controllers")) {
    out.unified = cgroup_root / "unified";
    out.unified_controllers = SplitWords(*controllers);
  }
  // Real directories first, so a controller reached both through
  // "cpu,cpuacct" and the "cpu" symlink maps to the co-mounted directory.
  std::vector<fs::directory_entry> dirs, links;
  std::error_code ec;
  for (fs::directory_iterator it(cgroup_root, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!it->is_directory(ec) || it->path().filename() == "unified") continue;
    (it->is_symlink(ec) ? links : dirs).push_back(*it);
  }
  if (ec) {
    spdlog::debug("[cgroup] cannot list {}: {}", cgroup_root.string(),
                  ec.message());
  }
  std::sort(dirs.begin(), dirs.end());
  std::sort(links.begin(), links.end());
  for (const auto* group : {&dirs, &links}) {
    for (const auto& entry : *group) {
      const auto names = SplitComma(entry.path().filename().string());
      const bool mounted = Exists(entry.path() / "cgroup.procs");
      if (names.empty() ||
          (!mounted &&
           !std::all_of(names.begin(), names.end(), [](const std::string& n) {
             return IsKnownController(n);
           }))) {
        continue;
      }
      for (const auto& name : names) {
        // "name=systemd" is how the named hierarchy appears in /proc/mounts.
        const std::string key =
            name.starts_with("name=") ? name.substr(5) : name;
        out.v1.emplace(key, entry.path());
      }
    }
  }
  return out;
}

std::optional<std::string> PodUidFromDirName(std::string_view name) {
  const auto pod = ParsePodDir(name);
  if (!pod) return std::nullopt;
  return pod->uid;
}

std::optional<ContainerCgroup> ContainerFromDirName(std::string_view name) {
  struct Pattern {
    std::string_view prefix;
    std::string_view runtime;
  };
  // Order matters: the conmon prefix must be seen before the plain CRI-O one.
  static constexpr std::array<Pattern, 5> kPatterns = {{
      {"crio-conmon-", ""},
      {"cri-containerd-", "containerd"},
      {"crio-", "cri-o"},
      {"docker-", "docker"},
      {"", ""},
  }};
  // CRI-O with the cgroupfs driver uses "crio-<id>" without ".scope".
  std::string_view base = name;
  if (base.ends_with(".scope")) base.remove_suffix(6);
  for (const auto& p : kPatterns) {
    if (!base.starts_with(p.prefix)) continue;
    if (p.prefix == "crio-conmon-") return std::nullopt;
    const auto id = base.substr(p.prefix.size());
    if (!IsContainerId(id)) return std::nullopt;
    // A bare id is a cgroupfs leaf and never carries ".scope".
    if (p.prefix.empty() && base.size() != name.size()) return std::nullopt;
    return ContainerCgroup{std::string(id), std::string(p.runtime), {}};
  }
  return std::nullopt;
}

std::vector<PodCgroup> ScanPodCgroups(const fs::path& hierarchy) {
  std::vector<PodCgroup> out;
  Walk(hierarchy, hierarchy, 0, out);
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.uid < b.uid; });
  return out;
}

std::vector<PodCgroup> ScanPodCgroups(const CgroupHierarchies& hierarchies) {
  std::vector<fs::path> roots;
  if (hierarchies.unified) roots.push_back(*hierarchies.unified);
  for (const auto& [controller, path] : hierarchies.v1) {
    roots.push_back(path);
  }
  std::set<fs::path> seen;
  std::map<std::string, PodCgroup> by_uid;
  for (const auto& root : roots) {
    std::error_code ec;
    auto canonical = fs::weakly_canonical(root, ec);
    if (!seen.insert(ec ? root : canonical).second) continue;
    for (auto& pod : ScanPodCgroups(root)) {
      auto [it, inserted] = by_uid.try_emplace(pod.uid, pod);
      if (inserted) continue;
      auto& merged = it->second.containers;
      for (auto& c : pod.containers) {
        const bool known =
            std::any_of(merged.begin(), merged.end(),
                        [&](const auto& m) { return m.id == c.id; });
        if (!known) merged.push_back(std::move(c));
      }
      std::sort(merged.begin(), merged.end(),
                [](const auto& a, const auto& b) { return a.id < b.id; });
    }
  }
  std::vector<PodCgroup> out;
  out.reserve(by_uid.size());
  for (auto& [uid, pod] : by_uid) out.push_back(std::move(pod));
  return out;
}

}  // namespace trainscope
