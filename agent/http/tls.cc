#include "http/tls.h"

#include <gnutls/gnutls.h>

namespace trainscope {

void AppendTlsOptions(const WebTlsConfig& tls,
                      std::vector<MHD_OptionItem>& options) {
  options.push_back(
      {MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(tls.cert_pem.c_str())});
  options.push_back(
      {MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(tls.key_pem.c_str())});
  if (!tls.client_ca_pem.empty()) {
    // Makes libmicrohttpd ask for a client certificate; Refusal() checks it.
    options.push_back({MHD_OPTION_HTTPS_MEM_TRUST, 0,
                       const_cast<char*>(tls.client_ca_pem.c_str())});
  }
  static const char kTls12[] = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";
  static const char kTls13[] = "NORMAL:-VERS-ALL:+VERS-TLS1.3";
  options.push_back(
      {MHD_OPTION_HTTPS_PRIORITIES, 0,
       const_cast<char*>(tls.min_version == "TLS13" ? kTls13 : kTls12)});
}

ClientCert VerifyClientCert(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
  if (!info || !info->tls_session) return ClientCert::kNone;
  auto session = static_cast<gnutls_session_t>(info->tls_session);
  unsigned int listed = 0;
  if (!gnutls_certificate_get_peers(session, &listed) || listed == 0) {
    return ClientCert::kNone;
  }
  unsigned int status = 0;
  if (gnutls_certificate_verify_peers2(session, &status) < 0 || status != 0) {
    return ClientCert::kInvalid;
  }
  return ClientCert::kValid;
}

}  // namespace trainscope
