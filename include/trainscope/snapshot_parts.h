#pragma once

#include <map>
#include <memory>
#include <typeindex>
#include <utility>

namespace trainscope {

// The parts of a snapshot that only one collector and its /metrics section
// read. Their types live in the collector's folder, so a new collector adds
// its part without touching the shared snapshot types; what several
// components read (pods, peers, GPUs, the node) stays in snapshot.h. One
// part per type; parts are immutable once stored, so copies of a snapshot
// share them.
class SnapshotParts {
 public:
  // Replaces the part of this type, if any.
  template <class Part>
  void Put(Part part) {
    parts_[std::type_index(typeid(Part))] =
        std::make_shared<const Part>(std::move(part));
  }

  // Null when the collector stored none this cycle.
  template <class Part>
  const Part* Get() const {
    const auto it = parts_.find(std::type_index(typeid(Part)));
    if (it == parts_.end()) return nullptr;
    return static_cast<const Part*>(it->second.get());
  }

 private:
  std::map<std::type_index, std::shared_ptr<const void>> parts_;
};

}  // namespace trainscope
