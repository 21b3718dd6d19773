#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trainscope/status.h"

namespace trainscope::cli {

// `--selector` values: PromQL label matchers (`cluster="a"`,
// `env=~"prod|stage",region!="x"`, optionally in braces), checked and
// rewritten in one canonical form, joined by commas, so they can be added
// to every query of the cluster view. The error quotes the bad part.
Status ParseSelectors(const std::vector<std::string>& selectors,
                      std::string* matchers);

// Whether `name` is a Prometheus label name: [a-zA-Z_][a-zA-Z0-9_]*.
bool IsLabelName(std::string_view name);

}  // namespace trainscope::cli
