#pragma once

#include <map>
#include <memory>
#include <typeindex>
#include <utility>

namespace trainscope {

// Each collector's options, keyed by their type, which lives in the
// collector's folder: the agent's config holds them without naming them,
// so a collector with flags adds no member to it (its flags write
// Mutable<Options>(), its factory reads Get<Options>(), both in its
// registry entry). Copies are deep: a copied config is changed alone.
class CollectorOptions {
 public:
  CollectorOptions() = default;
  CollectorOptions(const CollectorOptions& other) { *this = other; }
  CollectorOptions& operator=(const CollectorOptions& other) {
    if (this == &other) return *this;
    options_.clear();
    for (const auto& [type, held] : other.options_)
      options_.emplace(type, held->Clone());
    return *this;
  }
  CollectorOptions(CollectorOptions&&) noexcept = default;
  CollectorOptions& operator=(CollectorOptions&&) noexcept = default;

  // The options of this type, default-constructed the first time.
  template <class Options>
  Options& Mutable() {
    auto& held = options_[std::type_index(typeid(Options))];
    if (!held) held = std::make_unique<Held<Options>>();
    return static_cast<Held<Options>*>(held.get())->value;
  }

  // A copy; the defaults when nothing set them.
  template <class Options>
  Options Get() const {
    const auto it = options_.find(std::type_index(typeid(Options)));
    if (it == options_.end()) return Options{};
    return static_cast<const Held<Options>*>(it->second.get())->value;
  }

 private:
  struct AnyHeld {
    virtual ~AnyHeld() = default;
    virtual std::unique_ptr<AnyHeld> Clone() const = 0;
  };
  template <class Options>
  struct Held final : AnyHeld {
    Options value{};
    std::unique_ptr<AnyHeld> Clone() const override {
      return std::make_unique<Held>(*this);
    }
  };

  std::map<std::type_index, std::unique_ptr<AnyHeld>> options_;
};

}  // namespace trainscope
