#include <zlib.h>

#include <map>
#include <unordered_map>

#include "profile.pb.h"
#include "profiler/outputs.h"

namespace trainscope::profiler {
namespace {

namespace pb = perftools::profiles;

// Interns strings into the profile's string table (index 0 is "").
class StringTable {
 public:
  explicit StringTable(pb::Profile* profile) : profile_(profile) { Index(""); }
  int64_t Index(const std::string& s) {
    auto [it, inserted] = index_.try_emplace(s, profile_->string_table_size());
    if (inserted) profile_->add_string_table(s);
    return it->second;
  }

 private:
  pb::Profile* profile_;
  std::unordered_map<std::string, int64_t> index_;
};

class PprofBuilder {
 public:
  explicit PprofBuilder(pb::Profile* out) : out_(out), strings_(out) {}

  uint64_t Location(const Frame& f) {
    auto key = std::make_pair(f.module + "\n" + f.function, f.address);
    auto [it, inserted] = locations_.try_emplace(key, locations_.size() + 1);
    if (!inserted) return it->second;
    pb::Location* loc = out_->add_location();
    loc->set_id(it->second);
    loc->set_mapping_id(Mapping(f.module));
    loc->set_address(f.address);
    loc->add_line()->set_function_id(Function(f));
    return it->second;
  }

  int64_t Str(const std::string& s) { return strings_.Index(s); }

  uint64_t Mapping(const std::string& module) {
    auto [it, inserted] = mappings_.try_emplace(module, mappings_.size() + 1);
    if (inserted) {
      pb::Mapping* m = out_->add_mapping();
      m->set_id(it->second);
      m->set_filename(strings_.Index(module));
      m->set_has_functions(true);
    }
    return it->second;
  }

  uint64_t Function(const Frame& f) {
    auto [it, inserted] = functions_.try_emplace(f.module + "\n" + f.function,
                                                 functions_.size() + 1);
    if (inserted) {
      pb::Function* fn = out_->add_function();
      fn->set_id(it->second);
      fn->set_name(strings_.Index(f.function));
      fn->set_system_name(strings_.Index(f.function));
      fn->set_filename(strings_.Index(f.module));
    }
    return it->second;
  }

 private:
  pb::Profile* out_;
  StringTable strings_;
  std::map<std::pair<std::string, uint64_t>, uint64_t> locations_;
  std::unordered_map<std::string, uint64_t> mappings_;
  std::unordered_map<std::string, uint64_t> functions_;
};

}  // namespace

std::string Gzip(const std::string& in) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return {};
  }
  std::string out(deflateBound(&zs, in.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return rc == Z_STREAM_END ? out : std::string();
}

std::string EncodePprofGzip(const Profile& profile) {
  pb::Profile out;
  PprofBuilder b(&out);
  const bool cpu = profile.type == "cpu";
  auto add_type = [&](pb::ValueType* vt, const std::string& type,
                      const std::string& unit) {
    vt->set_type(b.Str(type));
    vt->set_unit(b.Str(unit));
  };
  if (cpu) {
    add_type(out.add_sample_type(), "samples", "count");
    add_type(out.add_sample_type(), "cpu", "nanoseconds");
    add_type(out.mutable_period_type(), "cpu", "nanoseconds");
    out.set_period(profile.period_ns);
  } else {
    add_type(out.add_sample_type(), "offcpu", "nanoseconds");
    add_type(out.mutable_period_type(), "offcpu", "nanoseconds");
    out.set_period(1);
  }
  // pprof names the profile after its first mapping ("File:"): make that
  // the executable most stacks start in (below libc's start code), not the
  // kernel or a shared library.
  std::map<std::string, int64_t> roots;
  for (const ProfileSample& s : profile.samples) {
    for (auto f = s.frames.rbegin(); f != s.frames.rend(); ++f) {
      if (!f->kernel && !f->module.empty() && f->module.front() != '[' &&
          f->module.find(".so") == std::string::npos) {
        roots[f->module] += s.value;
        break;
      }
    }
  }
  std::string main_module;
  int64_t best = -1;
  for (const auto& [module, value] : roots) {
    if (value > best) {
      best = value;
      main_module = module;
    }
  }
  if (!main_module.empty()) b.Mapping(main_module);
  out.set_time_nanos(profile.start_unix_ns);
  out.set_duration_nanos(profile.duration_ns);
  for (const std::string& c : profile.comments) out.add_comment(b.Str(c));
  for (const ProfileSample& s : profile.samples) {
    pb::Sample* sample = out.add_sample();
    for (const Frame& f : s.frames) sample->add_location_id(b.Location(f));
    if (cpu) {
      sample->add_value(s.value);
      sample->add_value(s.nanoseconds);
    } else {
      sample->add_value(s.nanoseconds);
    }
    for (const auto& [key, value] : s.labels) {
      if (value.empty()) continue;
      pb::Label* l = sample->add_label();
      l->set_key(b.Str(key));
      l->set_str(b.Str(value));
    }
    for (auto [key, num] :
         {std::pair<const char*, int64_t>{"pid", s.pid}, {"tid", s.tid}}) {
      pb::Label* l = sample->add_label();
      l->set_key(b.Str(key));
      l->set_num(num);
    }
  }
  return Gzip(out.SerializeAsString());
}

}  // namespace trainscope::profiler
