// A watch stream, cut into chunks at fuzzer-chosen points: the line splitter,
// then each line as a watch event, then its object as a pod.

#include <cstddef>
#include <cstdint>

#include "discovery/pod_json.h"
#include "discovery/watch_event.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainscope;
  fuzz::FuzzInput input(data, size);
  const size_t chunk = 1 + input.Byte();
  const std::string_view stream = input.Rest();
  LineSplitter splitter;
  const auto on_line = [](std::string_view line) {
    WatchEvent event;
    if (!ParseWatchEvent(line, &event).ok()) return true;
    if (event.object.is_object()) {
      PodInfo pod;
      (void)ParsePod(event.object, &pod);
    }
    return true;
  };
  for (size_t at = 0; at < stream.size(); at += chunk) {
    if (!splitter.Feed(stream.substr(at, chunk), on_line)) break;
  }
  return 0;
}
