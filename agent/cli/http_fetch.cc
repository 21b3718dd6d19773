#include "cli/http_fetch.h"

#include <httplib.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "cli/connect_error.h"
#include "trainscope/flag_checks.h"
#include "trainscope/strict_number.h"

namespace trainscope::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Calls `fire` once at `deadline` unless cancelled first. httplib 0.11's
// timeouts are per read, so a server that sends one header byte per second
// never trips them; its stop() (thread-safe: it only shuts the socket down)
// ends a request wherever it is.
class Watchdog {
 public:
  Watchdog(Clock::time_point deadline, std::function<void()> fire)
      : thread_([this, deadline, fire = std::move(fire)] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (!cv_.wait_until(lock, deadline, [this] { return cancelled_; })) {
            fire();
          }
        }) {}
  ~Watchdog() { Cancel(); }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void Cancel() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      cancelled_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool cancelled_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

// httplib's per-operation timeouts, never longer than the whole budget.
void SetSocketTimeouts(httplib::ClientImpl& client, double budget_seconds) {
  const auto whole = static_cast<time_t>(budget_seconds);
  const auto micros = static_cast<time_t>(
      std::lround((budget_seconds - static_cast<double>(whole)) * 1e6));
  // Connecting takes milliseconds when the server is up; 5 s (the CLI's
  // old connect timeout) is plenty and leaves the rest for the answer.
  if (budget_seconds > 5) {
    client.set_connection_timeout(5, 0);
  } else {
    client.set_connection_timeout(whole, micros);
  }
  client.set_read_timeout(whole, micros);
  client.set_write_timeout(whole, micros);
}

template <typename T, void (*Free)(T*)>
struct OpenSslDeleter {
  void operator()(T* p) const { Free(p); }
};
using Bio = std::unique_ptr<BIO, OpenSslDeleter<BIO, BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, OpenSslDeleter<X509, X509_free>>;
using KeyPtr =
    std::unique_ptr<EVP_PKEY, OpenSslDeleter<EVP_PKEY, EVP_PKEY_free>>;

Bio PemBio(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

X509Ptr ReadCertificate(const std::string& pem) {
  return X509Ptr{
      PEM_read_bio_X509(PemBio(pem).get(), nullptr, nullptr, nullptr)};
}
KeyPtr ReadPrivateKey(const std::string& pem) {
  return KeyPtr{
      PEM_read_bio_PrivateKey(PemBio(pem).get(), nullptr, nullptr, nullptr)};
}

// Every certificate of a PEM bundle in a new store; nullptr when none.
X509_STORE* PemStore(const std::string& pem) {
  Bio bio = PemBio(pem);
  X509_STORE* store = X509_STORE_new();
  int added = 0;
  while (
      X509Ptr cert{PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)}) {
    added += X509_STORE_add_cert(store, cert.get()) == 1;
  }
  if (added == 0) {
    X509_STORE_free(store);
    return nullptr;
  }
  return store;
}

std::unique_ptr<httplib::ClientImpl> MakeTlsClient(const HttpTarget& target) {
  std::unique_ptr<httplib::SSLClient> client;
  if (!target.client_cert_pem.empty()) {
    // The context takes its own references; ours go at the end of scope.
    const X509Ptr cert = ReadCertificate(target.client_cert_pem);
    const KeyPtr key = ReadPrivateKey(target.client_key_pem);
    // CheckTlsMaterial refused one that does not parse.
    client = std::make_unique<httplib::SSLClient>(target.host, target.port,
                                                  cert.get(), key.get());
  } else {
    client = std::make_unique<httplib::SSLClient>(target.host, target.port);
  }
  if (!target.ca_file.empty()) client->set_ca_cert_path(target.ca_file);
  if (!target.ca_pem.empty()) {
    // The client's context owns the store.
    if (X509_STORE* store = PemStore(target.ca_pem))
      client->set_ca_cert_store(store);
  }
  return client;
}

std::unique_ptr<httplib::ClientImpl> MakeClient(const HttpTarget& target) {
  if (target.origin.rfind("https://", 0) == 0) return MakeTlsClient(target);
  return std::make_unique<httplib::ClientImpl>(target.host, target.port);
}

// Why httplib gave up, for the errors a watchdog or a cap did not cause.
std::string Reason(const HttpTarget& target, httplib::Error error,
                   int saved_errno, double seconds_left) {
  using httplib::Error;
  switch (error) {
    case Error::Connection:
      return ConnectFailureReason(target.host, target.port, saved_errno,
                                  seconds_left);
    case Error::ConnectionTimeout:
      return "no answer to connecting within 5 s (a firewall dropping "
             "packets, or the host is down)";
    case Error::Read:
      return "the connection broke while reading the answer (the server "
             "closed or reset it)";
    case Error::Write:
      return "the connection broke while sending the request";
    case Error::SSLConnection:
      return "TLS handshake failed (is it an https server? does it offer a "
             "protocol and cipher this client accepts?)";
    case Error::SSLLoadingCerts:
      return "cannot load the CA certificates (" +
             (target.ca_file.empty() ? std::string("the system's")
                                     : "--ca-file " + target.ca_file) +
             ")";
    case Error::SSLServerVerification:
      return "TLS: the server's certificate is not signed by " +
             (target.ca_file.empty()
                  ? std::string("a system CA; give --ca-file")
                  : target.ca_file);
    case Error::Compression:
      return "cannot decode the answer's Content-Encoding";
    default:
      return httplib::to_string(error);
  }
}

}  // namespace

Status CheckTlsMaterial(const HttpTarget& target) {
  if (!target.ca_pem.empty()) {
    X509_STORE* store = PemStore(target.ca_pem);
    if (!store) return Status::Error("the CA data holds no PEM certificate");
    X509_STORE_free(store);
  }
  if (target.client_cert_pem.empty()) return Status::Ok();
  const X509Ptr cert = ReadCertificate(target.client_cert_pem);
  if (!cert) return Status::Error("the client certificate is not PEM");
  const KeyPtr key = ReadPrivateKey(target.client_key_pem);
  if (!key) return Status::Error("the client key is not a PEM private key");
  if (X509_check_private_key(cert.get(), key.get()) != 1)
    return Status::Error("the client key does not match its certificate");
  return Status::Ok();
}

Status FetchWithinLimits(const HttpTarget& target, const std::string& path,
                         const std::multimap<std::string, std::string>& params,
                         HttpAnswer* out) {
  const std::string url = target.origin + target.base_path + path;
  const HttpLimits& limits = target.limits;
  const auto start = Clock::now();
  const auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(limits.timeout_seconds));
  const std::string timed_out =
      "timed out after " + NumberText(limits.timeout_seconds) +
      " s (--timeout " + NumberText(limits.timeout_seconds) + ")";
  const std::string too_large_text = "the answer is larger than " +
                                     std::to_string(limits.max_response_bytes) +
                                     " bytes (--max-response-bytes)";

  auto client = MakeClient(target);
  SetSocketTimeouts(*client, limits.timeout_seconds);
  // The watchdog and the callbacks below both set this; whichever comes
  // first ends the request.
  std::atomic<bool> late{false};
  bool too_large = false;
  std::string body;
  const auto past_deadline = [&] {
    if (Clock::now() >= deadline) late = true;
    return late.load();
  };
  httplib::Params query(params.begin(), params.end());
  httplib::Headers headers(target.headers.begin(), target.headers.end());
  httplib::Result res{nullptr, httplib::Error::Unknown};
  int saved_errno = 0;
  {
    Watchdog watchdog(deadline, [&] {
      late = true;
      client->stop();
    });
    res = client->Get(
        target.base_path + path, query, headers,
        [&](const httplib::Response& r) {
          // A declared length over the cap is refused before any body byte.
          if (r.has_header("Content-Length")) {
            const auto length =
                ParseWholeNumber(r.get_header_value("Content-Length"));
            if (length && *length > limits.max_response_bytes) {
              too_large = true;
              return false;
            }
          }
          return !past_deadline();
        },
        [&](const char* data, size_t n) {
          if (past_deadline()) return false;
          if (n > limits.max_response_bytes - body.size()) {
            too_large = true;
            return false;
          }
          body.append(data, n);
          return true;
        },
        [&](uint64_t, uint64_t) { return !past_deadline(); });
    saved_errno = errno;
  }
  if (res) {
    out->status = res->status;
    out->body = std::move(body);
    return Status::Ok();
  }
  if (too_large) return Status::Error(url + ": " + too_large_text);
  if (late || Clock::now() >= deadline) {
    return Status::Error(url + ": " + timed_out);
  }
  const double left =
      std::chrono::duration<double>(deadline - Clock::now()).count();
  const std::string why = Reason(target, res.error(), saved_errno, left);
  switch (res.error()) {
    case httplib::Error::Connection:
    case httplib::Error::ConnectionTimeout:
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLLoadingCerts:
    case httplib::Error::SSLServerVerification:
      return Status::Error("cannot reach " + url + ": " + why);
    default:
      return Status::Error(url + ": " + why);
  }
}

}  // namespace trainscope::cli
