// users[].user.exec: kubectl's credential plugin protocol
// (client.authentication.k8s.io). The plugin runs without a shell, with
// KUBERNETES_EXEC_INFO set, stdin closed (non-interactive) and stderr
// passed through so its own messages reach the user; its stdout is an
// ExecCredential whose status holds a token or a client certificate.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "kube/kubeconfig.h"
#include "trainscope/unique_fd.h"

namespace trainscope::kube {
namespace {

using Clock = std::chrono::steady_clock;

// A plugin prints a few KiB; more is not an ExecCredential.
constexpr size_t kMaxOutputBytes = 1 << 20;

[[noreturn]] void Fail(const ExecPlugin& plugin, const std::string& why) {
  throw std::runtime_error("kubeconfig: exec plugin " + plugin.command + ": " +
                           why);
}

std::string ExecInfo(const ExecPlugin& plugin) {
  return nlohmann::json{{"apiVersion", plugin.api_version},
                        {"kind", "ExecCredential"},
                        {"spec", {{"interactive", false}}}}
      .dump();
}

// The plugin's environment: ours, its `env` entries over it, and
// KUBERNETES_EXEC_INFO. Built before fork: the child only calls exec.
std::vector<std::string> PluginEnvironment(const ExecPlugin& plugin) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (plugin.env.count(name) == 0 && name != "KUBERNETES_EXEC_INFO")
      env.push_back(entry);
  }
  for (const auto& [name, value] : plugin.env)
    env.push_back(name + "=" + value);
  env.push_back("KUBERNETES_EXEC_INFO=" + ExecInfo(plugin));
  return env;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the child: never returns.
[[noreturn]] void ExecChild(char* const argv[], char* const envp[],
                            int stdout_fd) {
  const int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
  ::dup2(stdout_fd, STDOUT_FILENO);
  ::execvpe(argv[0], argv, envp);
  _exit(errno == ENOENT ? 127 : 126);
}

// Reads the child's stdout until EOF, the cap or the deadline; false when
// the deadline passed.
bool ReadUntil(int fd, Clock::time_point deadline, std::string* out) {
  char buf[4096];
  while (out->size() <= kMaxOutputBytes) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return false;
    if (ready < 0) return true;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    out->append(buf, static_cast<size_t>(n));
  }
  return true;
}

std::string RunPlugin(const ExecPlugin& plugin, double timeout_seconds) {
  std::vector<std::string> args = {plugin.command};
  args.insert(args.end(), plugin.args.begin(), plugin.args.end());
  std::vector<std::string> env = PluginEnvironment(plugin);
  const std::vector<char*> argv = Pointers(args);
  const std::vector<char*> envp = Pointers(env);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) Fail(plugin, std::strerror(errno));
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  const pid_t pid = ::fork();
  if (pid < 0) Fail(plugin, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) ExecChild(argv.data(), envp.data(), write_end.get());
  write_end.reset();
  std::string output;
  const bool in_time = ReadUntil(
      read_end.get(),
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(timeout_seconds)),
      &output);
  if (!in_time) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!in_time)
    Fail(plugin, "no answer within " +
                     std::to_string(static_cast<int>(timeout_seconds)) +
                     " s (killed)");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    Fail(plugin, "not found (is it installed and on PATH?)");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    Fail(plugin, "failed (" +
                     (WIFEXITED(status)
                          ? "exit status " + std::to_string(WEXITSTATUS(status))
                          : "signal " + std::to_string(WTERMSIG(status))) +
                     "); its messages are above");
  if (output.size() > kMaxOutputBytes)
    Fail(plugin, "printed more than 1 MiB, not an ExecCredential");
  return output;
}

}  // namespace

void ReadExecCredential(const std::string& json_text, KubeConfig* config) {
  const auto doc = nlohmann::json::parse(json_text, nullptr, false);
  if (!doc.is_object() || doc.value("kind", "") != "ExecCredential")
    throw std::runtime_error("not an ExecCredential (kind missing or other)");
  const auto status = doc.find("status");
  if (status == doc.end() || !status->is_object())
    throw std::runtime_error("ExecCredential without status");
  const auto text = [&](const char* key) {
    const auto it = status->find(key);
    return it != status->end() && it->is_string() ? it->get<std::string>()
                                                  : std::string();
  };
  const std::string token = text("token");
  const std::string cert = text("clientCertificateData");
  const std::string key = text("clientKeyData");
  if (cert.empty() != key.empty())
    throw std::runtime_error(
        "ExecCredential status has clientCertificateData or clientKeyData "
        "without the other");
  if (token.empty() && cert.empty())
    throw std::runtime_error(
        "ExecCredential status has neither token nor clientCertificateData");
  if (!token.empty()) config->token = token;
  if (!cert.empty()) {
    config->client_cert_pem = cert;
    config->client_key_pem = key;
  }
}

void RunCredentialPlugin(KubeConfig* config, double timeout_seconds) {
  if (!config->has_exec) return;
  const std::string output = RunPlugin(config->exec, timeout_seconds);
  try {
    ReadExecCredential(output, config);
  } catch (const std::exception& e) {
    Fail(config->exec, e.what());
  }
  config->has_exec = false;
}

}  // namespace trainscope::kube
