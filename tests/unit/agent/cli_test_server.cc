#include "cli_test_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "child_process.h"

namespace trainscope::testing {

ScriptedHttpServer::ScriptedHttpServer(Handler handler)
    : handler_(std::move(handler)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      ::listen(listen_fd_, 64) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) !=
          0) {
    std::abort();  // no loopback: nothing in these tests can run
  }
  port_ = ntohs(addr.sin_port);
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

ScriptedHttpServer::~ScriptedHttpServer() {
  stopping_ = true;
  accept_thread_.join();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  for (auto& t : connections_) t.join();
  ::close(listen_fd_);
}

std::string ScriptedHttpServer::url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

void ScriptedHttpServer::AcceptLoop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 20) != 1) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard<std::mutex> lock(mutex_);
    open_fds_.push_back(fd);
    connections_.emplace_back([this, fd] {
      // The request's header, read a byte at a time up to its blank line
      // (the CLI sends no body); at most 2 s.
      timeval tv{2, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      std::string request;
      char c = 0;
      while (request.find("\r\n\r\n") == std::string::npos &&
             ::recv(fd, &c, 1, 0) == 1) {
        request += c;
      }
      if (request.find("\r\n\r\n") != std::string::npos) handler_(fd, request);
      ::shutdown(fd, SHUT_WR);
      // Closed by the destructor (after shutdown) would race with a reused
      // fd number; close here, once, and forget it.
      std::lock_guard<std::mutex> guard(mutex_);
      std::erase(open_fds_, fd);
      ::close(fd);
    });
  }
}

bool ScriptedHttpServer::Send(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes_sent_ += static_cast<size_t>(n);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void ScriptedHttpServer::Drip(int fd, std::string_view data,
                              std::chrono::milliseconds gap) {
  for (char c : data) {
    if (stopping_ || !Send(fd, std::string_view(&c, 1))) return;
    std::this_thread::sleep_for(gap);
  }
}

std::string HttpResponse(int status, std::string_view body,
                         std::string_view content_type) {
  std::ostringstream out;
  out << "HTTP/1.1 " << status << " X\r\nContent-Type: " << content_type
      << "\r\nContent-Length: " << body.size()
      << "\r\nConnection: close\r\n\r\n"
      << body;
  return out.str();
}

int ClosedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), len);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

namespace {

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

CliResult RunCli(const std::vector<std::string>& args,
                 std::chrono::milliseconds deadline) {
  namespace fs = std::filesystem;
  static std::atomic<int> counter{0};
  const fs::path dir = fs::temp_directory_path() /
                       ("trainscope-cli-" + std::to_string(::getpid()) + "-" +
                        std::to_string(counter++));
  fs::create_directories(dir);
  const std::string out_path = (dir / "out").string();
  const std::string err_path = (dir / "err").string();
  std::vector<std::string> argv_text{TRAINSCOPE_CLI_BIN};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ForkTiedToParent();
  if (pid == 0) {
    const int out =
        ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err =
        ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  CliResult r;
  int status = 0;
  rusage usage{};
  while (true) {
    const pid_t done = ::wait4(pid, &status, WNOHANG, &usage);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() - start > deadline) {
      ::kill(pid, SIGKILL);
      ::wait4(pid, &status, 0, &usage);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  r.took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  r.exit_code =
      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.max_rss_kib = usage.ru_maxrss;
  r.out = ReadFile(out_path);
  r.err = ReadFile(err_path);
  fs::remove_all(dir);
  return r;
}

}  // namespace trainscope::testing
