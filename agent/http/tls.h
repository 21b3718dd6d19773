#pragma once

#include <microhttpd.h>

#include <vector>

#include "http/web_config.h"

namespace trainscope {

// The libmicrohttpd options that serve `tls` (certificate, key, client CA,
// protocol floor). The option values point into `tls`, which must outlive
// the daemon.
void AppendTlsOptions(const WebTlsConfig& tls,
                      std::vector<MHD_OptionItem>& options);

// Whether the TLS peer of a connection presented a certificate that the
// client CA verifies (libmicrohttpd only asks for it; checking is ours).
enum class ClientCert { kNone, kValid, kInvalid };
ClientCert VerifyClientCert(MHD_Connection* connection);

}  // namespace trainscope
