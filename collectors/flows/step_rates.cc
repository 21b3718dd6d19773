#include "flows/step_rates.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>

namespace trainscope {

void StepRateTracker::Add(const std::vector<BurstEvent>& events,
                          const PeerResolver& resolver) {
  for (const BurstEvent& e : events) {
    const PodInfo* local = resolver.Local(e.pod);
    const PodInfo* peer = resolver.Peer(e.peer);
    if (!local || !peer) continue;
    Stream& stream = streams_[{local->uid, peer->uid, e.direction}];
    // A start before the oldest a window can hold means the source's clock
    // started again (a pcap file read anew): the old train no longer lines
    // up with the new one. Within that, an earlier start is another
    // connection's piece of an exchange, reported late.
    if (!stream.bursts.empty() &&
        e.start_s < stream.bursts.back().start_s - s_.max_window_s) {
      stream.bursts.clear();
      stream.exchanges.clear();
      stream.open_exchanges.clear();
      stream.due_s.reset();
    }
    AddToTrain(&stream.bursts, {e.start_s, e.payload_bytes, e.end_s},
               s_.merge_gap_s);
    if (stream.bursts.size() > s_.max_bursts_per_stream)
      stream.bursts.pop_front();
    if (e.local_port != 0 || e.peer_port != 0) JoinTurn(stream, e);
  }
}

void StepRateTracker::JoinTurn(Stream& stream, const BurstEvent& e) const {
  const BurstPoint piece{e.start_s, e.payload_bytes, e.end_s};
  auto [it, fresh] = stream.open_exchanges.try_emplace(
      Connection{e.local_port, e.peer_port}, OpenExchange{e.turn, piece});
  if (fresh) {
    if (stream.open_exchanges.size() > s_.max_connections_per_stream) {
      auto stalest = std::min_element(
          stream.open_exchanges.begin(), stream.open_exchanges.end(),
          [](const auto& a, const auto& b) {
            return a.second.joined.end_s < b.second.joined.end_s;
          });
      stream.open_exchanges.erase(stalest);
    }
    return;
  }
  OpenExchange& open = it->second;
  if (open.turn == e.turn) {
    open.joined.bytes += piece.bytes;
    open.joined.end_s = std::max(open.joined.end_s, piece.end_s);
    return;
  }
  // Joined within the merge gap as the bursts are: the exchanges are the
  // bursts with more joined, never fewer.
  AddToTrain(&stream.exchanges, open.joined, s_.merge_gap_s);
  if (stream.exchanges.size() > s_.max_bursts_per_stream)
    stream.exchanges.pop_front();
  open = OpenExchange{e.turn, piece};
}

void StepRateTracker::Prune(const PodList& pods, const PodList* peer_pods,
                            double now_s) {
  std::set<std::string> known;
  for (const PodInfo& p : pods) known.insert(p.uid);
  if (peer_pods)
    for (const PodInfo& p : *peer_pods) known.insert(p.uid);
  for (auto it = streams_.begin(); it != streams_.end();) {
    Stream& stream = it->second;
    const double oldest = now_s - s_.max_window_s;
    while (!stream.bursts.empty() && stream.bursts.front().start_s < oldest)
      stream.bursts.pop_front();
    while (!stream.exchanges.empty() &&
           stream.exchanges.front().start_s < oldest)
      stream.exchanges.pop_front();
    std::erase_if(stream.open_exchanges, [oldest](const auto& open) {
      return open.second.joined.end_s < oldest;
    });
    const auto& [pod, peer, direction] = it->first;
    if (stream.bursts.empty() || !known.count(pod) || !known.count(peer)) {
      it = streams_.erase(it);
    } else {
      ++it;
    }
  }
}

bool PiecesOfKnownStep(const PeriodEstimate& e, double known_step_bytes) {
  return e.whole_exchanges && e.step_bytes > 0 &&
         kPiecesPerKnownStep * e.step_bytes <= known_step_bytes;
}

double BusyShare(std::span<const BurstPoint> window) {
  if (window.empty()) return 0;
  double busy = 0, last_end = window.front().start_s;
  for (const BurstPoint& b : window) {
    const double end = std::max(b.end_s, b.start_s);
    // Bursts of a peer's connections can overlap: count each second once.
    busy += std::max(0.0, end - std::max(b.start_s, last_end));
    last_end = std::max(last_end, end);
  }
  const double span = last_end - window.front().start_s;
  return span > 0 ? busy / span : 0;
}

bool UnanchoredPeriod(const PeriodEstimate& e, double busy_share,
                      double pod_busy_share) {
  if (e.from_turns || e.method == PeriodEstimate::Method::kStepBytes)
    return false;
  return std::max(busy_share, pod_busy_share) >= kLinkBoundBusyShare;
}

std::optional<PeriodEstimate> RecentChange(std::span<const BurstPoint> window,
                                           double period_s) {
  std::vector<uint64_t> sizes;
  for (const BurstPoint& b : window) sizes.push_back(b.bytes);
  if (sizes.size() < 4) return std::nullopt;
  std::nth_element(sizes.begin(), sizes.begin() + sizes.size() * 9 / 10,
                   sizes.end());
  const double big = 0.3 * static_cast<double>(sizes[sizes.size() * 9 / 10]);
  std::vector<double> starts;  // of the newest four big bursts, newest first
  for (size_t i = window.size(); i > 0 && starts.size() < 4; --i)
    if (static_cast<double>(window[i - 1].bytes) >= big)
      starts.push_back(window[i - 1].start_s);
  if (starts.size() < 4) return std::nullopt;
  double sum = 0;
  for (size_t i = 0; i + 1 < starts.size(); ++i) {
    const double gap = starts[i] - starts[i + 1];
    if (gap <= kRateChange * period_s) return std::nullopt;
    sum += gap;
  }
  PeriodEstimate e;
  e.period_s = sum / static_cast<double>(starts.size() - 1);
  e.cycles = static_cast<int>(starts.size() - 1);
  e.bursts = starts.size();
  return e;
}

StepRateTracker::WindowEstimate StepRateTracker::StreamPeriod(
    const Stream& stream, double pod_busy_share) const {
  const auto& b = stream.bursts;
  if (b.size() < 3) return {};
  // The shortest window that shows a period: a short one follows a rate
  // that changes (a straggler slowing down) within seconds, but only
  // counts when it holds many cycles; slow steps need the longer ones.
  double span = s_.short_window_s;
  while (true) {
    size_t first = b.size();
    while (first > 0) {
      --first;
      const size_t want =
          span == s_.short_window_s ? s_.short_window_bursts : s_.min_bursts;
      if (b.size() - first >= want &&
          b.back().start_s - b[first].start_s >= span)
        break;
    }
    // A longer window must really hold that much history: a stream younger
    // than 30 s has only a noisy volume estimate, or a start-up's. (Only
    // the whole stream can fall short; no longer window would hold more.)
    const double held = b.back().start_s - b[first].start_s;
    if (span > s_.short_window_s && held < 0.8 * span) return {{}, span, held};
    const std::vector<BurstPoint> window(b.begin() + first, b.end());
    // The turns first: where they join a contended link's pieces into whole
    // exchanges, one a step, a request marks each step, while the bursts'
    // own comb can catch the rhythm the link cuts them at.
    auto period = ExchangePeriod(stream, window.front().start_s);
    if (!period) period = EstimatePeriodAtAnyScale(window, s_.period);
    // Nothing ties the period to the steps in a stream that never showed
    // a step's size (issue 31).
    if (period && stream.step_bytes <= 0 &&
        UnanchoredPeriod(*period, BusyShare(window), pod_busy_share))
      period.reset();
    // Cut exchanges of a size seen whole: their bytes count the steps, as
    // the rhythm they are cut at need not be the steps'. So do "whole"
    // exchanges a fraction of that size (PiecesOfKnownStep): a saturated
    // link's continuous traffic comes in equal pieces at a steady rhythm,
    // one size as much as whole steps are.
    if (period && stream.step_bytes > 0 &&
        (!period->whole_exchanges ||
         PiecesOfKnownStep(*period, stream.step_bytes))) {
      period = EstimatePeriodByStepBytes(window, stream.step_bytes, s_.period);
    }
    // The short window for a regular train (the comb) and for one of
    // whole exchanges, whose every burst is a step, so its count over a
    // few seconds is the rate then; a contended PS's workers are both
    // irregular and quick to change speed, and a 30 s window would report
    // each change 15 s late. The volume estimate of an irregular train of
    // cut exchanges needs the longer windows to average out where its first
    // and last steps fall; a count over a step size seen whole is not noisy.
    const bool enough = span > s_.short_window_s ||
                        (period && period->cycles >= s_.short_window_cycles &&
                         (period->method != PeriodEstimate::Method::kVolume ||
                          period->whole_exchanges));
    if (period && enough) {
      if (auto changed = RecentChange(window, period->period_s))
        period = changed;
      return {period, span, held};
    }
    if (span >= s_.max_window_s || first == 0) return {{}, span, held};
    span = std::min(span == s_.short_window_s ? s_.min_window_s : span * 2,
                    s_.max_window_s);
  }
}

std::optional<PeriodEstimate> StepRateTracker::ExchangePeriod(
    const Stream& stream, double from_s) const {
  const auto& x = stream.exchanges;
  const auto first = std::lower_bound(
      x.begin(), x.end(), from_s,
      [](const BurstPoint& b, double t) { return b.start_s < t; });
  if (x.end() - first < 3) return std::nullopt;
  const std::vector<BurstPoint> window(first, x.end());
  // Exchanges that are not whole as they are (a one-way connection's
  // endless one, pieces of a stream with no requests) are left to the
  // bursts without running the comb over them.
  if (!WholeExchangeBytes(window)) return std::nullopt;
  auto period = EstimatePeriodAtAnyScale(window, s_.period);
  if (!period || !period->whole_exchanges) return std::nullopt;
  period->from_turns = true;
  return period;
}

std::map<std::string, double> StepRateTracker::PodBusyShares() const {
  // The window ends at the pod's newest burst: a stream that stopped long
  // ago (a connection of the job's start-up) must not stretch it.
  std::map<std::string, double> newest;
  for (const auto& [key, stream] : streams_) {
    double& t = newest
                    .try_emplace(std::get<0>(key),
                                 -std::numeric_limits<double>::infinity())
                    .first->second;
    t = std::max(t, stream.bursts.back().start_s);
  }
  std::map<std::string, std::vector<BurstPoint>> recent;
  for (const auto& [key, stream] : streams_) {
    const std::string& pod = std::get<0>(key);
    const double from = newest.at(pod) - s_.short_window_s;
    auto& out = recent[pod];
    for (auto it = stream.bursts.rbegin();
         it != stream.bursts.rend() && it->start_s >= from; ++it)
      out.push_back(*it);
  }
  std::map<std::string, double> out;
  for (auto& [pod, bursts] : recent) {
    std::sort(bursts.begin(), bursts.end(),
              [](const BurstPoint& a, const BurstPoint& b) {
                return a.start_s < b.start_s;
              });
    out[pod] = BusyShare(bursts);
  }
  return out;
}

std::optional<PeriodEstimate> StepRateTracker::CurrentPeriod(
    Stream& stream, double now_s, double pod_busy_share) {
  if (!stream.due_s || now_s >= *stream.due_s) {
    const WindowEstimate e = StreamPeriod(stream, pod_busy_share);
    stream.period = e.period;
    stream.due_s.reset();
    if (e.span_s > s_.short_window_s) stream.due_s = now_s + s_.refresh_s;
    // Not from a stream's first seconds: a few bursts before its link
    // filled up can look whole at any size.
    if (e.period && e.period->step_bytes > 0 && e.held_s >= s_.short_window_s)
      stream.step_bytes = e.period->step_bytes;
    stream.estimated_s = now_s;
  }
  const std::optional<PeriodEstimate>& period = stream.period;
  if (period && now_s - stream.bursts.back().start_s > 3 * period->period_s + 1)
    return std::nullopt;
  return period;
}

std::map<std::string, StepRate> StepRateTracker::Rates(double now_s) {
  struct Vote {
    double rate;
    double jitter;
    bool whole;
  };
  std::map<std::string, std::vector<Vote>> votes;
  std::map<std::string, StepRate> out;
  const std::map<std::string, double> pod_busy = PodBusyShares();
  for (auto& [key, stream] : streams_) {
    const std::string& pod = std::get<0>(key);
    StepRate& rate = out[pod];
    ++rate.streams_seen;
    const auto period = CurrentPeriod(stream, now_s, pod_busy.at(pod));
    if (!period) continue;
    ++rate.streams;
    votes[pod].push_back(
        {1.0 / period->period_s, period->jitter, period->whole_exchanges});
  }
  for (auto& [pod, v] : votes) {
    const auto whole = static_cast<size_t>(std::count_if(
        v.begin(), v.end(), [](const Vote& x) { return x.whole; }));
    if (whole >= 2 && 2 * whole >= v.size())
      std::erase_if(v, [](const Vote& x) { return !x.whole; });
  }
  // The median stream: a peer whose exchanges are not once per step (an
  // evaluator's reads, a contended link's pieces) is outvoted.
  for (auto& [pod, v] : votes) {
    std::sort(v.begin(), v.end(),
              [](const Vote& a, const Vote& b) { return a.rate < b.rate; });
    const Vote& mid = v[(v.size() - 1) / 2];
    const double rate =
        v.size() % 2 ? mid.rate : (mid.rate + v[v.size() / 2].rate) / 2;
    out[pod].steps_per_second = rate;
    out[pod].jitter = mid.jitter;
  }
  return out;
}

namespace {

using Job = std::pair<std::string, std::string>;

// The rates a job's ranks agree on: the largest set within `tolerance` of
// its slowest member, with how many ranks it holds.
struct Agreement {
  double min = 0, max = 0, median = 0;
  size_t ranks = 0;
};

Agreement LargestAgreement(std::vector<double> values, double tolerance) {
  std::sort(values.begin(), values.end());
  size_t best = 0, best_from = 0;
  for (size_t from = 0, to = 0; from < values.size(); ++from) {
    to = std::max(to, from);
    while (to + 1 < values.size() &&
           values[to + 1] <= values[from] * (1 + tolerance))
      ++to;
    if (to - from + 1 > best) {
      best = to - from + 1;
      best_from = from;
    }
  }
  const auto first = values.begin() + static_cast<long>(best_from);
  const double median =
      best % 2 ? first[best / 2] : (first[best / 2 - 1] + first[best / 2]) / 2;
  return {*first, first[static_cast<long>(best) - 1], median, best};
}

}  // namespace

void ReconcileRanks(std::map<std::string, StepRate>& rates, const PodList& pods,
                    const PodList* peer_pods, double tolerance) {
  std::set<Job> with_ps;
  std::map<std::string, Job> job_of;  // step-running pods by uid
  for (const PodList* list : {&pods, peer_pods}) {
    if (!list) continue;
    for (const PodInfo& p : *list) {
      if (p.training_job.empty()) continue;
      const Job job{p.namespace_name, p.training_job};
      if (p.role == Role::kPs) with_ps.insert(job);
      if (RunsTrainingSteps(p.role)) job_of.emplace(p.uid, job);
    }
  }
  // A PS job's workers step at their own pace: left as they are.
  auto rank_job = [&](const std::string& uid) -> const Job* {
    auto job = job_of.find(uid);
    if (job == job_of.end() || with_ps.count(job->second)) return nullptr;
    return &job->second;
  };
  std::map<Job, std::vector<double>> job_rates;
  std::map<Job, size_t> ranks_seen;
  for (const auto& [uid, r] : rates) {
    const Job* job = rank_job(uid);
    if (!job) continue;
    if (r.steps_per_second) job_rates[*job].push_back(*r.steps_per_second);
    if (r.steps_per_second || r.streams_seen > 0) ++ranks_seen[*job];
  }
  std::map<Job, Agreement> agreed;
  for (auto& [job, values] : job_rates) {
    Agreement a = LargestAgreement(values, tolerance);
    if (2 * a.ranks > values.size()) agreed[job] = a;
  }
  for (auto& [uid, r] : rates) {
    const Job* job = rank_job(uid);
    if (!job || (!r.steps_per_second && r.streams_seen == 0)) continue;
    auto it = agreed.find(*job);
    if (it == agreed.end()) {
      r.steps_per_second.reset();
      continue;
    }
    const Agreement& a = it->second;
    if (r.steps_per_second && *r.steps_per_second >= a.min &&
        *r.steps_per_second <= a.max)
      continue;
    r.steps_per_second.reset();
    if (2 * a.ranks > ranks_seen[*job]) {
      r.steps_per_second = a.median;
      r.from_job_ranks = true;
    }
  }
}

namespace {

const char* MethodName(PeriodEstimate::Method method) {
  switch (method) {
    case PeriodEstimate::Method::kComb:
      return " comb";
    case PeriodEstimate::Method::kVolume:
      return " volume";
    case PeriodEstimate::Method::kStepBytes:
      return " step-bytes";
  }
  return " ?";
}

}  // namespace

std::vector<std::string> StepRateTracker::Describe(double now_s) const {
  std::vector<std::string> out;
  for (const auto& [key, stream] : streams_) {
    const auto& [pod, peer, direction] = key;
    std::string line =
        pod + " " + peer +
        (direction == FlowDirection::kReceive ? " rx " : " tx ") +
        std::to_string(stream.bursts.size()) + " bursts, " +
        std::to_string(stream.exchanges.size()) + " exchanges by turn:";
    const size_t from = stream.bursts.size() > 6 ? stream.bursts.size() - 6 : 0;
    for (size_t i = from; i < stream.bursts.size(); ++i) {
      line += " " + std::to_string(stream.bursts[i].start_s - now_s) + "s/" +
              std::to_string(stream.bursts[i].bytes) + "B";
    }
    const auto& period = stream.period;
    if (period) line += period->whole_exchanges ? " whole" : " cut";
    if (period && period->from_turns) line += " turns";
    line += period ? std::string(MethodName(period->method)) + " period " +
                         std::to_string(period->period_s)
                   : " no period";
    line +=
        " (estimated " + std::to_string(now_s - stream.estimated_s) + "s ago)";
    if (stream.step_bytes > 0)
      line += "; a step moves " +
              std::to_string(static_cast<uint64_t>(stream.step_bytes)) + "B";
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace trainscope
