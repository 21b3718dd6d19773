#include "exporter/http_families.h"

#include "exporter/family_builder.h"

namespace trainscope {

void AppendHttpFamilies(const HttpServerStats& stats, const HttpLimits& limits,
                        std::vector<prometheus::MetricFamily>& out) {
  using prometheus::MetricType;
  FamilyBuilder open("trainscope_http_connections",
                     "HTTP connections open now (this scrape's included).",
                     MetricType::Gauge);
  open.Add({}, static_cast<double>(stats.open_connections));
  open.MoveInto(out);
  FamilyBuilder max("trainscope_http_max_connections",
                    "Open HTTP connections allowed (--http-max-connections, "
                    "fitted to the open-file limit).",
                    MetricType::Gauge);
  max.Add({}, static_cast<double>(limits.max_connections));
  max.MoveInto(out);
  FamilyBuilder closed(
      "trainscope_http_connections_closed_total",
      "HTTP connections the server closed to protect scrapes: reason "
      "max_connections or per_ip (at accept, over the limit) or "
      "header_timeout (no complete request header within --http-timeout).",
      MetricType::Counter);
  closed.Add({{"reason", "max_connections"}},
             static_cast<double>(stats.rejected_limit_total));
  closed.Add({{"reason", "per_ip"}},
             static_cast<double>(stats.rejected_per_ip_total));
  closed.Add({{"reason", "header_timeout"}},
             static_cast<double>(stats.header_timeouts_total));
  closed.MoveInto(out);
  FamilyBuilder refused(
      "trainscope_http_unauthorized_requests_total",
      "HTTP requests refused by --web-config-file: 401 (missing or wrong "
      "credentials) or 403 (no valid client certificate).",
      MetricType::Counter);
  refused.Add({}, static_cast<double>(stats.unauthorized_total));
  refused.MoveInto(out);
}

}  // namespace trainscope
