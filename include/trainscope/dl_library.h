#pragma once

#include <memory>
#include <string>

namespace trainscope {

// A library loaded at run time, closed (dlclose) when its handle dies: for
// the libraries a program may run without (NVML on a CPU node, libpcap for
// the one CLI command that reads captures).
struct DlCloser {
  void operator()(void* handle) const;
};
using DlHandle = std::unique_ptr<void, DlCloser>;

// dlopen with RTLD_NOW | RTLD_LOCAL: every symbol is bound at once, and none
// joins the global namespace, so a second copy (tests load a fake and its
// variants) never binds to the first one's functions. Null on failure, with
// dlerror()'s words in `why`.
DlHandle DlOpen(const std::string& path, std::string* why);

// The symbol's address, null when the library lacks it; DlResolve stores
// it as the function pointer type `Fn`.
void* DlSymbolAddress(void* handle, const char* symbol);
template <typename Fn>
void DlResolve(void* handle, const char* symbol, Fn& out) {
  out = reinterpret_cast<Fn>(DlSymbolAddress(handle, symbol));
}

}  // namespace trainscope
