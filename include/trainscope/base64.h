#pragma once

#include <string>
#include <string_view>

namespace trainscope {

// Standard base64 (RFC 4648 section 4) with its padding, as HTTP basic
// auth and kubeconfig's *-data fields carry it. False on anything else
// (a length not a multiple of 4, a stray character, padding inside).
bool DecodeBase64(std::string_view in, std::string* out);

}  // namespace trainscope
