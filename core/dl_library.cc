#include "trainscope/dl_library.h"

#include <dlfcn.h>

namespace trainscope {

void DlCloser::operator()(void* handle) const {
  if (handle != nullptr) dlclose(handle);
}

DlHandle DlOpen(const std::string& path, std::string* why) {
  DlHandle handle(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!handle && why != nullptr) {
    const char* error = dlerror();
    *why = error ? error : "unknown dlopen error";
  }
  return handle;
}

void* DlSymbolAddress(void* handle, const char* symbol) {
  return dlsym(handle, symbol);
}

}  // namespace trainscope
