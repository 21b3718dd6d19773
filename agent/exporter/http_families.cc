#include "exporter/http_families.h"

#include "exposition/family_builder.h"

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
      "header_timeout (no complete request header within --http-timeout) or "
      "query_parameters (answered 414: more query parameters than the "
      "endpoints take).",
      MetricType::Counter);
  closed.Add({{"reason", "max_connections"}},
             static_cast<double>(stats.rejected_limit_total));
  closed.Add({{"reason", "per_ip"}},
             static_cast<double>(stats.rejected_per_ip_total));
  closed.Add({{"reason", "header_timeout"}},
             static_cast<double>(stats.header_timeouts_total));
  closed.Add({{"reason", "query_parameters"}},
             static_cast<double>(stats.query_floods_total));
  closed.MoveInto(out);
  FamilyBuilder refused(
      "trainscope_http_unauthorized_requests_total",
      "HTTP requests refused by --web-config-file: 401 (missing or wrong "
      "credentials) or 403 (no valid client certificate).",
      MetricType::Counter);
  refused.Add({}, static_cast<double>(stats.unauthorized_total));
  refused.MoveInto(out);
  FamilyBuilder throttled(
      "trainscope_http_throttled_requests_total",
      "HTTP requests answered 429 without checking their credentials: their "
      "client address sent too many wrong ones, or every bcrypt check was "
      "busy (docs/reliability.md, \"Security\").",
      MetricType::Counter);
  throttled.Add({}, static_cast<double>(stats.throttled_total));
  throttled.MoveInto(out);
  FamilyBuilder abandoned(
      "trainscope_http_abandoned_requests_total",
      "Requests answered later (profiles) whose client closed the connection "
      "before the answer; their work was stopped.",
      MetricType::Counter);
  abandoned.Add({}, static_cast<double>(stats.abandoned_total));
  abandoned.MoveInto(out);
}

}  // namespace trainscope
