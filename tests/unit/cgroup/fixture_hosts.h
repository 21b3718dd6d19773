#pragma once

// Access to tests/fixtures/hosts/<layout>: its cgroup root, its pods.json as
// the PodInfo list discovery would produce, and its expected.json.

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "trainscope/pod.h"

namespace trainscope::testing {

inline const std::vector<std::string>& FixtureLayouts() {
  static const std::vector<std::string> layouts = {"v2-systemd", "v2-cgroupfs",
                                                   "v1-systemd", "v1-cgroupfs",
                                                   "hybrid-systemd"};
  return layouts;
}

inline std::filesystem::path FixtureDir(const std::string& layout) {
  return std::filesystem::path(TRAINSCOPE_SOURCE_DIR) / "tests" / "fixtures" /
         "hosts" / layout;
}

inline std::filesystem::path FixtureCgroupRoot(const std::string& layout) {
  return FixtureDir(layout) / "sys" / "fs" / "cgroup";
}

inline nlohmann::json LoadJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

inline nlohmann::json LoadExpected(const std::string& layout) {
  return LoadJson(FixtureDir(layout) / "expected.json");
}

// The subset of a PodList the cgroup collector looks at: uid, names and the
// runtime ids of the containers (scheme stripped).
inline PodList LoadPods(const std::string& layout) {
  PodList pods;
  const auto list = LoadJson(FixtureDir(layout) / "pods.json");
  for (const auto& item : list.at("items")) {
    PodInfo pod;
    pod.uid = item.at("metadata").at("uid").get<std::string>();
    pod.name = item.at("metadata").at("name").get<std::string>();
    pod.namespace_name = item.at("metadata").at("namespace").get<std::string>();
    for (const auto& status : item.at("status").at("containerStatuses")) {
      const auto id = status.at("containerID").get<std::string>();
      const auto scheme = id.find("://");
      pod.containers.push_back(
          ContainerInfo{status.at("name").get<std::string>(),
                        id.substr(scheme + 3), id.substr(0, scheme)});
    }
    pods.push_back(std::move(pod));
  }
  return pods;
}

// A temporary directory removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "trainscope-cgroup-XXXXXX")
            .string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

  void Touch(const std::filesystem::path& rel,
             const std::string& content = "") const {
    std::filesystem::create_directories((path_ / rel).parent_path());
    std::ofstream(path_ / rel) << content;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace trainscope::testing
