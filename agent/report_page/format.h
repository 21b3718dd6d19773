#pragma once

#include <string>

namespace trainscope::page {

// "12.3 MB/s", "850 B/s": bytes per second with SI prefixes.
std::string FormatRate(double bytes_per_second);

// "87%" (whole percent; "<1%" for a small non-zero ratio).
std::string FormatPercent(double ratio);

}  // namespace trainscope::page
