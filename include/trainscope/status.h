#pragma once

#include <string>
#include <utility>

namespace trainscope {

// Outcome of an operation (a collection, a discovery start). kNoData means
// "nothing to collect here" (no GPU, no pods): not an error, but the collector
// is not up either.
class Status {
 public:
  enum class Code { kOk, kNoData, kError };

  static Status Ok() { return Status(Code::kOk, {}); }
  static Status NoData(std::string why) {
    return Status(Code::kNoData, std::move(why));
  }
  static Status Error(std::string why) {
    return Status(Code::kError, std::move(why));
  }

  Code code() const { return code_; }
  bool ok() const { return code_ == Code::kOk; }
  const std::string& message() const { return message_; }

 private:
  Status(Code code, std::string message)
      : code_(code), message_(std::move(message)) {}

  Code code_;
  std::string message_;
};

using CollectStatus = Status;

}  // namespace trainscope
