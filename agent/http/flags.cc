#include "http/flags.h"

#include <cmath>

#include "trainscope/flag_checks.h"

namespace trainscope {

void AddHttpFlags(CLI::App& app, HttpLimits* limits) {
  app.add_option("--http-max-connections", limits->max_connections,
                 "Open HTTP connections in all; one more is closed at accept "
                 "(the open-file limit is raised to fit)")
      ->envname("TRAINSCOPE_HTTP_MAX_CONNECTIONS")
      ->capture_default_str()
      ->check(WholeNumberIn(1, 1 << 20));
  app.add_option("--http-max-connections-per-ip",
                 limits->max_connections_per_ip,
                 "Open HTTP connections from one client address; one more "
                 "is closed at accept (0 = no per-address cap)")
      ->envname("TRAINSCOPE_HTTP_MAX_CONNECTIONS_PER_IP")
      ->capture_default_str()
      ->check(WholeNumberIn(0, 1 << 20));
  app.add_option_function<double>(
         "--http-timeout",
         [limits](double seconds) {
           limits->timeout = std::chrono::milliseconds(
               static_cast<int64_t>(std::llround(seconds * 1000)));
         },
         "Seconds a client has to send a complete request header (after "
         "connecting or after its previous response); also how long a "
         "stalled transfer may make no progress")
      ->envname("TRAINSCOPE_HTTP_TIMEOUT")
      ->default_str(std::to_string(limits->timeout.count() / 1000))
      ->check(NumberIn(0.1, 3600, true));
}

}  // namespace trainscope
