#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace trainscope::page {

// The report as one self-contained HTML page: inline SVG and CSS, no
// scripts, fonts or anything fetched. Served by the agent at `/` and written
// by `trainscope report --html FILE`.

// Forbids every script, object, frame and fetch; allows only the page's own
// inline styles and data: images. The agent sends it as a header (with
// frame-ancestors, which browsers ignore in a <meta>), the page carries it
// in a <meta> so a file opened from disk is just as locked down.
inline constexpr std::string_view kContentSecurityPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'";
inline constexpr std::string_view kContentSecurityPolicyHeader =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

struct PageOptions {
  // Served by the agent: links to its /metrics and API endpoints.
  bool agent_links = false;
  // <meta http-equiv="refresh"> period; 0 = no refresh (files on disk).
  int refresh_seconds = 0;
};

// Never throws on odd input: missing or mistyped report fields are shown as
// absent.
std::string RenderReportPage(const nlohmann::json& report,
                             const PageOptions& options);

}  // namespace trainscope::page
