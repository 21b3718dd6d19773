#include "flows/bpf_loader.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <set>

#include "bpf_common/libbpf_support.h"
#include "flows/flow_map.h"
#include "peer_flows.skel.h"

namespace trainscope {
namespace {

// What this collector's BPF operations need (bpf::ErrnoText).
std::string ErrnoText(int err) {
  return bpf::ErrnoText(err,
                        "CAP_BPF+CAP_NET_ADMIN or CAP_SYS_ADMIN, and "
                        "RLIMIT_MEMLOCK on old kernels");
}

constexpr size_t kStride = (sizeof(peer_flow_value) + 7) / 8 * 8;

}  // namespace

void PeerFlowsBpf::SkelDeleter::operator()(peer_flows* skel) const {
  peer_flows__destroy(skel);
}

void PeerFlowsBpf::LinkDeleter::operator()(bpf_link* link) const {
  bpf_link__destroy(link);
}

void PeerFlowsBpf::RingDeleter::operator()(ring_buffer* ring) const {
  ring_buffer__free(ring);
}

PeerFlowsBpf::~PeerFlowsBpf() {
  bursts_.reset();
  ingress_.reset();
  egress_.reset();
  skel_.reset();
}

Status PeerFlowsBpf::Load(uint32_t map_entries, uint64_t burst_gap_ns,
                          bool headers_in_place) {
  skel_.reset(peer_flows__open());
  if (!skel_) {
    return Status::Error("opening the BPF object failed: " + ErrnoText(errno));
  }
  if (int err = bpf_map__set_max_entries(skel_->maps.peer_flows, map_entries)) {
    return Status::Error("setting the flow map size to " +
                         std::to_string(map_entries) +
                         " failed: " + ErrnoText(err));
  }
  skel_->rodata->burst_gap_ns = burst_gap_ns;
  skel_->rodata->read_headers_in_place = headers_in_place ? 1 : 0;
  if (int err = peer_flows__load(skel_.get())) {
    skel_.reset();
    return Status::Error("loading the BPF programs failed: " + ErrnoText(err));
  }
  return Status::Ok();
}

std::unique_ptr<PeerFlowsBpf> PeerFlowsBpf::Attach(
    const std::filesystem::path& cgroup_dir, uint32_t map_entries,
    uint64_t burst_gap_ns, Status* error) {
  libbpf_set_print(bpf::LibbpfPrint);
  std::unique_ptr<PeerFlowsBpf> self(new PeerFlowsBpf());
  int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) {
    *error = Status::Error("cannot count possible CPUs: " + ErrnoText(cpus));
    return nullptr;
  }
  self->cpus_ = static_cast<size_t>(cpus);
  Status loaded = self->Load(map_entries, burst_gap_ns, true);
  if (!loaded.ok()) {
    // Reading headers in place needs CAP_PERFMON; the copying variant
    // needs only CAP_BPF. The second error is the one that matters.
    spdlog::info("[flows] {}; loading again with headers copied out",
                 loaded.message());
    loaded = self->Load(map_entries, burst_gap_ns, false);
  }
  if (!loaded.ok()) {
    *error = loaded;
    return nullptr;
  }
  self->cgroup_fd_.reset(::open(cgroup_dir.c_str(), O_RDONLY | O_DIRECTORY));
  if (!self->cgroup_fd_.valid()) {
    *error = Status::Error("opening cgroup " + cgroup_dir.string() +
                           " failed: " + ErrnoText(errno));
    return nullptr;
  }
  const int fd = self->cgroup_fd_.get();
  bpf_link* in =
      bpf_program__attach_cgroup(self->skel_->progs.peer_flows_ingress, fd);
  if (!in) {
    *error =
        Status::Error("attaching cgroup_skb/ingress to " + cgroup_dir.string() +
                      " failed: " + ErrnoText(errno));
    return nullptr;
  }
  self->ingress_.reset(in);
  bpf_link* out =
      bpf_program__attach_cgroup(self->skel_->progs.peer_flows_egress, fd);
  if (!out) {
    *error =
        Status::Error("attaching cgroup_skb/egress to " + cgroup_dir.string() +
                      " failed: " + ErrnoText(errno));
    return nullptr;
  }
  self->egress_.reset(out);
  self->bursts_.reset(
      ring_buffer__new(bpf_map__fd(self->skel_->maps.burst_events),
                       &PeerFlowsBpf::OnBurst, self.get(), nullptr));
  if (!self->bursts_) {
    *error = Status::Error("opening the burst ring buffer failed: " +
                           ErrnoText(errno));
    return nullptr;
  }
  return self;
}

Status PeerFlowsBpf::SetPods(const std::map<uint64_t, uint32_t>& pod_levels) {
  if (pod_levels == pods_) return Status::Ok();
  const int fd = bpf_map__fd(skel_->maps.pod_cgroups);
  // Sockets cache their pod (socket_states): every change of the table, even
  // a partial one, must invalidate those answers. Released after the map
  // writes so a program that reads the new generation sees the new table.
  struct Invalidate {
    __u64* generation;
    ~Invalidate() { __atomic_fetch_add(generation, 1, __ATOMIC_RELEASE); }
  } invalidate{&skel_->bss->pods_generation};
  // Add before removing so a pod that stays never misses a packet.
  for (const auto& [id, level] : pod_levels) {
    if (pods_.count(id)) continue;
    uint8_t one = 1;
    if (bpf_map_update_elem(fd, &id, &one, BPF_ANY) != 0) {
      return Status::Error("adding pod cgroup " + std::to_string(id) +
                           " to the BPF map failed: " + ErrnoText(errno));
    }
  }
  for (const auto& [id, level] : pods_) {
    if (pod_levels.count(id)) continue;
    bpf_map_delete_elem(fd, &id);
    departed_.insert(id);
  }
  std::set<uint32_t> levels;
  for (const auto& [id, level] : pod_levels) levels.insert(level);
  if (levels.size() > PEER_FLOWS_MAX_POD_LEVELS) {
    spdlog::warn(
        "[flows] pod cgroups sit at {} different depths; only the "
        "{} shallowest are counted",
        levels.size(), PEER_FLOWS_MAX_POD_LEVELS);
  }
  size_t i = 0;
  for (uint32_t level : levels) {
    if (i == PEER_FLOWS_MAX_POD_LEVELS) break;
    skel_->bss->pod_levels[i++] = level;
  }
  for (; i < PEER_FLOWS_MAX_POD_LEVELS; ++i) skel_->bss->pod_levels[i] = 0;
  pods_ = pod_levels;
  return Status::Ok();
}

Status PeerFlowsBpf::Drain(std::map<FlowKey, FlowCounters>* out) {
  out->clear();
  Status s = batch_ok_ ? DrainBatch(out) : DrainIterate(out);
  if (s.ok()) entries_ = out->size();
  return s;
}

Status PeerFlowsBpf::DrainBatch(std::map<FlowKey, FlowCounters>* out) {
  const int fd = bpf_map__fd(skel_->maps.peer_flows);
  constexpr uint32_t kChunk = 256;
  std::vector<peer_flow_key> keys(kChunk);
  std::vector<unsigned char> values(kChunk * kStride * cpus_);
  // The batch cursor is opaque; a key-sized buffer is large enough.
  peer_flow_key cursor{};
  bool first = true;
  for (int rounds = 0; rounds < 1 << 20; ++rounds) {
    uint32_t count = kChunk;
    LIBBPF_OPTS(bpf_map_batch_opts, opts);
    int err = bpf_map_lookup_batch(fd, first ? nullptr : &cursor, &cursor,
                                   keys.data(), values.data(), &count, &opts);
    const int saved = errno;
    first = false;
    for (uint32_t i = 0; i < count; ++i) {
      (*out)[UnpackFlowKey(keys[i])] =
          SumPerCpu(values.data() + i * kStride * cpus_, cpus_, kStride);
    }
    if (err == 0) continue;
    if (saved == ENOENT) return Status::Ok();
    // (ENOTSUP is EOPNOTSUPP on Linux.)
    if (saved == EINVAL || saved == EOPNOTSUPP) {
      spdlog::info("[flows] batch map lookup unavailable ({}); iterating keys",
                   std::strerror(saved));
      batch_ok_ = false;
      out->clear();
      return DrainIterate(out);
    }
    return Status::Error("reading the flow map failed: " + ErrnoText(saved));
  }
  return Status::Ok();
}

Status PeerFlowsBpf::DrainIterate(std::map<FlowKey, FlowCounters>* out) {
  const int fd = bpf_map__fd(skel_->maps.peer_flows);
  std::vector<unsigned char> value(kStride * cpus_);
  peer_flow_key key{}, next{};
  const peer_flow_key* prev = nullptr;
  const uint64_t limit = bpf_map__max_entries(skel_->maps.peer_flows) * 2ull;
  for (uint64_t n = 0; n < limit; ++n) {
    if (bpf_map_get_next_key(fd, prev, &next) != 0) break;
    if (bpf_map_lookup_elem(fd, &next, value.data()) == 0) {
      (*out)[UnpackFlowKey(next)] = SumPerCpu(value.data(), cpus_, kStride);
    }
    key = next;
    prev = &key;
  }
  return Status::Ok();
}

namespace {

// Deletes every entry of `map_fd` whose key (a struct starting with the pod
// cgroup id) belongs to a departed pod. Keys are collected first: deleting
// while walking would restart get_next_key from the beginning.
template <typename Key>
uint64_t DeleteEntriesOf(int map_fd, const std::set<uint64_t>& cgroups,
                         uint64_t max_entries) {
  std::vector<Key> doomed;
  Key key{}, next{};
  const Key* prev = nullptr;
  for (uint64_t n = 0; n < max_entries * 2; ++n) {
    if (bpf_map_get_next_key(map_fd, prev, &next) != 0) break;
    if (cgroups.count(next.pod_cgroup_id)) doomed.push_back(next);
    key = next;
    prev = &key;
  }
  uint64_t deleted = 0;
  for (const Key& k : doomed) {
    if (bpf_map_delete_elem(map_fd, &k) == 0) ++deleted;
  }
  return deleted;
}

}  // namespace

void PeerFlowsBpf::ForgetDepartedPods() {
  if (departed_.empty()) return;
  deleted_ += DeleteEntriesOf<peer_flow_key>(
      bpf_map__fd(skel_->maps.peer_flows), departed_,
      bpf_map__max_entries(skel_->maps.peer_flows));
  departed_.clear();
}

int PeerFlowsBpf::OnBurst(void* ctx, void* data, size_t size) {
  auto* self = static_cast<PeerFlowsBpf*>(ctx);
  if (size < sizeof(peer_burst_event) || !self->burst_sink_) return 0;
  peer_burst_event ev;
  std::memcpy(&ev, data, sizeof(ev));
  self->burst_sink_->push_back(UnpackBurstEvent(ev));
  return 0;
}

Status PeerFlowsBpf::DrainBursts(std::vector<BurstEvent>* out) {
  burst_sink_ = out;
  const int n = ring_buffer__consume(bursts_.get());
  burst_sink_ = nullptr;
  if (n < 0) {
    return Status::Error("reading the burst ring buffer failed: " +
                         ErrnoText(n));
  }
  return Status::Ok();
}

PeerFlowsBpf::Stats PeerFlowsBpf::stats() const {
  Stats s;
  s.entries = entries_;
  s.capacity = bpf_map__max_entries(skel_->maps.peer_flows);
  s.inserts = __atomic_load_n(&skel_->bss->inserts, __ATOMIC_RELAXED);
  s.deleted = deleted_;
  s.insert_failures =
      __atomic_load_n(&skel_->bss->insert_failures, __ATOMIC_RELAXED);
  s.burst_events_lost =
      __atomic_load_n(&skel_->bss->burst_events_lost, __ATOMIC_RELAXED);
  return s;
}

}  // namespace trainscope
