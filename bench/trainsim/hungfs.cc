#include "hungfs.h"

#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "pod_process.h"
#include "trainscope/unique_fd.h"

namespace trainsim {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kFileNode = 2;
constexpr uint64_t kFileSize = 1 << 20;

fuse_attr Attr(uint64_t node) {
  fuse_attr a{};
  a.ino = node;
  a.nlink = 1;
  if (node == FUSE_ROOT_ID) {
    a.mode = S_IFDIR | 0755;
  } else {
    a.mode = S_IFREG | 0444;
    a.size = kFileSize;
    a.blocks = kFileSize / 512;
  }
  a.blksize = 4096;
  return a;
}

// One FUSE session on an open /dev/fuse.
class HungFs {
 public:
  explicit HungFs(int fd) : fd_(fd) {}

  // Serves requests until a stop signal; READ is never answered.
  void Serve() {
    std::vector<char> buf(FUSE_MIN_READ_BUFFER + (1 << 20));
    while (!WaitForStop(0)) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 200) <= 0) continue;
      const ssize_t n = read(fd_, buf.data(), buf.size());
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == ENOENT))
        continue;
      if (n < static_cast<ssize_t>(sizeof(fuse_in_header))) {
        spdlog::info("[hungfs] /dev/fuse read ended: {}",
                     n < 0 ? std::strerror(errno) : "short");
        return;
      }
      Handle(*reinterpret_cast<const fuse_in_header*>(buf.data()),
             buf.data() + sizeof(fuse_in_header));
    }
  }

 private:
  template <typename T>
  void Reply(uint64_t unique, const T& body) {
    fuse_out_header h{};
    h.len = sizeof h + sizeof body;
    h.unique = unique;
    std::vector<char> out(h.len);
    std::memcpy(out.data(), &h, sizeof h);
    std::memcpy(out.data() + sizeof h, &body, sizeof body);
    if (write(fd_, out.data(), out.size()) < 0)
      spdlog::warn("[hungfs] reply: {}", std::strerror(errno));
  }

  void Error(uint64_t unique, int err) {
    fuse_out_header h{};
    h.len = sizeof h;
    h.error = -err;
    h.unique = unique;
    if (write(fd_, &h, sizeof h) < 0 && errno != ENOENT)
      spdlog::warn("[hungfs] error reply: {}", std::strerror(errno));
  }

  void Handle(const fuse_in_header& in, const char* body) {
    switch (in.opcode) {
      case FUSE_INIT: {
        const auto& init = *reinterpret_cast<const fuse_init_in*>(body);
        fuse_init_out out{};
        out.major = FUSE_KERNEL_VERSION;
        out.minor = std::min<uint32_t>(init.minor, FUSE_KERNEL_MINOR_VERSION);
        out.max_readahead = 0;
        out.max_write = 4096;
        out.max_background = 16;
        out.congestion_threshold = 12;
        Reply(in.unique, out);
        return;
      }
      case FUSE_LOOKUP: {
        if (in.nodeid != FUSE_ROOT_ID ||
            std::strcmp(body, kHungFileName) != 0) {
          Error(in.unique, ENOENT);
          return;
        }
        fuse_entry_out e{};
        e.nodeid = kFileNode;
        e.attr = Attr(kFileNode);
        Reply(in.unique, e);
        return;
      }
      case FUSE_GETATTR: {
        fuse_attr_out a{};
        a.attr = Attr(in.nodeid);
        Reply(in.unique, a);
        return;
      }
      case FUSE_OPEN:
      case FUSE_OPENDIR: {
        fuse_open_out o{};
        o.fh = 1;
        o.open_flags = FOPEN_DIRECT_IO;  // every read reaches us
        Reply(in.unique, o);
        return;
      }
      case FUSE_READ:
        ++stuck_;
        spdlog::info("[hungfs] READ {} left unanswered ({} so far)", in.unique,
                     stuck_);
        return;  // the hang: never answered
      case FUSE_INTERRUPT:
        // Left unanswered too: the reader then waits killable (state D).
        return;
      case FUSE_FORGET:
      case FUSE_BATCH_FORGET:
        return;  // no reply expected
      case FUSE_RELEASE:
      case FUSE_RELEASEDIR:
      case FUSE_FLUSH:
      case FUSE_ACCESS:
        Error(in.unique, 0);
        return;
      default:
        Error(in.unique, ENOSYS);
    }
  }

  const int fd_;
  int stuck_ = 0;
};

// The connection number of the FUSE mount at `dir` (its st_dev's minor):
// /sys/fs/fuse/connections/<N>.
bool AbortConnection(const std::string& dir) {
  // stat of a mount point of a hung FUSE fs is answered by GETATTR, which
  // a dead server cannot: read the device from /proc/self/mountinfo.
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string id, parent, majmin, root, point;
    f >> id >> parent >> majmin >> root >> point;
    if (point != dir) continue;
    const size_t colon = majmin.find(':');
    if (colon == std::string::npos) return false;
    const std::string conn = majmin.substr(colon + 1);
    std::ofstream abort("/sys/fs/fuse/connections/" + conn + "/abort");
    abort << "1\n";
    return static_cast<bool>(abort);
  }
  return false;
}

// Mount points (as /proc/self/mounts lists them) of FUSE mounts under dir.
std::vector<std::string> FuseMountsUnder(const std::string& dir) {
  std::vector<std::string> out;
  std::ifstream in("/proc/self/mounts");
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string source, point, type;
    f >> source >> point >> type;
    if (type.rfind("fuse", 0) == 0 &&
        (point == dir || point.rfind(dir + "/", 0) == 0))
      out.push_back(point);
  }
  return out;
}

}  // namespace

std::vector<std::string> ReleaseHungMounts(const std::string& dir) {
  std::vector<std::string> left;
  for (const std::string& point : FuseMountsUnder(dir)) {
    AbortConnection(point);
    if (umount2(point.c_str(), MNT_DETACH) != 0 && errno != EINVAL &&
        errno != ENOENT)
      left.push_back("fuse mount " + point + ": " + std::strerror(errno));
  }
  return left;
}

int RunHungFs(const std::string& mountpoint) {
  BlockStopSignals();
  std::error_code ec;
  fs::create_directories(mountpoint, ec);
  const trainscope::UniqueFd fuse(open("/dev/fuse", O_RDWR | O_CLOEXEC));
  const int fd = fuse.get();
  if (!fuse.valid()) {
    spdlog::error("[hungfs] open /dev/fuse: {}", std::strerror(errno));
    return 1;
  }
  const std::string opts = "fd=" + std::to_string(fd) +
                           ",rootmode=40000,user_id=0,group_id=0,allow_other";
  if (mount("trainsim-hungfs", mountpoint.c_str(), "fuse.trainsim-hungfs",
            MS_NOSUID | MS_NODEV, opts.c_str()) != 0) {
    spdlog::error("[hungfs] mount {}: {}", mountpoint, std::strerror(errno));
    return 1;
  }
  spdlog::info("[hungfs] mounted at {}; reads of {}/{} never return",
               mountpoint, mountpoint, kHungFileName);
  HungFs(fd).Serve();
  // Every stuck read fails at once, then the mount goes (the device closes
  // on return).
  AbortConnection(mountpoint);
  if (umount2(mountpoint.c_str(), MNT_DETACH) != 0)
    spdlog::warn("[hungfs] umount {}: {}", mountpoint, std::strerror(errno));
  spdlog::info("[hungfs] unmounted {}", mountpoint);
  return 0;
}

}  // namespace trainsim
