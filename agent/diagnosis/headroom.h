#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "diagnosis/diagnosis.h"
#include "diagnosis/ps_share.h"
#include "diagnosis/settings.h"
#include "diagnosis/training_speed.h"
#include "diagnosis/window.h"

namespace trainscope::diagnosis {

// The scaling forecast of a PS job (docs/diagnosis.md "Headroom"): each
// resource the job's PS share (a PS's link in each direction, a PS's CPU,
// the uplink of a node holding a PS) carries load in proportion to the
// job's step rate, so the fullest one, measured now, says how far the job
// can grow before adding workers stops adding steps.
struct ResourceLoad {
  // kPsLink, kPsCpu or kNodeUplink.
  std::string resource;
  std::string pod;        // the PS (empty for a node uplink)
  std::string node;       // the PS's node, or the node of the uplink
  std::string direction;  // "receive" | "transmit" (links only)
  double used = 0;        // bytes/s or cores, the job's part and the rest
  double capacity = 0;    // bytes/s or cores
  double job_used = 0;    // the part the job's step rate drives
  // How many times the job's load fits before the resource is full:
  // (capacity - what others use) / job_used, never below 1.
  double load_factor = 0;
  // Workers of the job whose exchanges cross it.
  size_t workers = 0;
};

inline constexpr char kPsLink[] = "ps_link";
inline constexpr char kPsCpu[] = "ps_cpu";
inline constexpr char kNodeUplink[] = "node_uplink";

struct JobHeadroom {
  std::string namespace_name;
  std::string training_job;
  // Every measured resource, the fullest (smallest load_factor) first.
  std::vector<ResourceLoad> resources;
  // The job's workers now (the most any resource serves) and, from the
  // bottleneck, how many it can run before its step rate stops growing.
  size_t workers = 0;
  double max_workers = 0;
  // From the workers' mean step rate where measured.
  std::optional<double> steps_per_second;
  std::optional<double> max_steps_per_second;

  const ResourceLoad& bottleneck() const { return resources.front(); }
};

// One entry per PS job with at least one measured resource.
std::vector<JobHeadroom> ComputeHeadroom(const WindowStats& stats,
                                         const std::vector<JobTraffic>& jobs,
                                         const std::vector<JobSpeed>& speeds);

// The job's entry for `namespace_name/training_job`, or null.
const JobHeadroom* HeadroomOf(const std::vector<JobHeadroom>& all,
                              const std::string& namespace_name,
                              const std::string& training_job);

// {"workers", "max_workers", "steps_per_second"?, "max_steps_per_second"?,
// "bottleneck": {..}, "resources": [{"resource", "pod"?, "node"?,
// "direction"?, "utilization_ratio", "capacity", "load_factor",
// "workers"}]}: the report's jobs[].headroom and the evidence of the
// diagnoses that cite it.
nlohmann::json HeadroomJson(const JobHeadroom& h);
nlohmann::json ResourceJson(const ResourceLoad& r);

// For a diagnosis of a PS (hot, or at its CPU limit): adds its job's
// forecast to the evidence (`headroom`), and when that PS is the job's
// bottleneck with a load factor under the settings' margin, says in the
// summary where scaling stops and makes it at least a warning
// (`severity_from: headroom`): it costs little now (paced steps, spare
// slack) but caps the job's growth. `all` may be null (not computed).
void NoteHeadroom(const std::vector<JobHeadroom>* all,
                  const HeadroomSettings& s, Diagnosis& d);

// "ps-0's transmit link (40 Mbit/s)", "ps-0's CPU limit (1 core)",
// "node-a's uplink (receive, 1000 Mbit/s)": the bottleneck in words.
std::string DescribeResource(const ResourceLoad& r);

}  // namespace trainscope::diagnosis
