#include "profiler/elf_symbols.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/auxv.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

#include "trainscope/unique_fd.h"

namespace trainscope::profiler {
namespace {

struct ElfDeleter {
  void operator()(Elf* elf) const { elf_end(elf); }
};
using ElfPtr = std::unique_ptr<Elf, ElfDeleter>;

constexpr uint32_t kNtGnuBuildId = 3;

std::string Hex(const unsigned char* data, size_t n) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 15];
  }
  return out;
}

std::string ReadBuildId(Elf* elf) {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) continue;
    size_t offset = 0, name_off = 0, desc_off = 0;
    GElf_Nhdr nhdr;
    while ((offset = gelf_getnote(data, offset, &nhdr, &name_off, &desc_off)) >
           0) {
      if (nhdr.n_type == kNtGnuBuildId && nhdr.n_namesz == 4 &&
          std::memcmp(static_cast<char*>(data->d_buf) + name_off, "GNU", 4) ==
              0) {
        return Hex(static_cast<unsigned char*>(data->d_buf) + desc_off,
                   nhdr.n_descsz);
      }
    }
  }
  return {};
}

// Function symbols of the first symbol table of `type` found.
template <typename Add>
bool ReadSymbols(Elf* elf, uint32_t type, Add add) {
  size_t strndx = 0;
  Elf_Scn* scn = nullptr;
  bool found = false;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != type) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || shdr.sh_entsize == 0) continue;
    strndx = shdr.sh_link;
    const size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
      if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 ||
          sym.st_shndx == SHN_UNDEF) {
        continue;
      }
      const char* name = elf_strptr(elf, strndx, sym.st_name);
      if (!name || !*name) continue;
      add(sym.st_value, sym.st_size, name);
      found = true;
    }
  }
  return found;
}

}  // namespace

std::shared_ptr<const ElfSymbols> ElfSymbols::Load(
    const std::filesystem::path& path, Status* error) {
  if (elf_version(EV_CURRENT) == EV_NONE) {
    *error = Status::Error("libelf: version mismatch");
    return nullptr;
  }
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    *error =
        Status::Error("opening " + path.string() + ": " + std::strerror(errno));
    return nullptr;
  }
  ElfPtr elf(elf_begin(fd.get(), ELF_C_READ_MMAP, nullptr));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) {
    *error =
        Status::Error(path.string() + " is not an ELF file: " + elf_errmsg(-1));
    return nullptr;
  }
  return FromElf(elf.get());
}

std::shared_ptr<const ElfSymbols> ElfSymbols::LoadImage(const void* image,
                                                        size_t size,
                                                        Status* error) {
  if (elf_version(EV_CURRENT) == EV_NONE) {
    *error = Status::Error("libelf: version mismatch");
    return nullptr;
  }
  // libelf reads, never writes, an image opened with elf_memory.
  ElfPtr elf(elf_memory(static_cast<char*>(const_cast<void*>(image)), size));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) {
    *error = Status::Error(std::string("not an ELF image: ") + elf_errmsg(-1));
    return nullptr;
  }
  return FromElf(elf.get());
}

std::shared_ptr<const ElfSymbols> ElfSymbols::Vdso() {
  static const std::shared_ptr<const ElfSymbols> vdso =
      []() -> std::shared_ptr<const ElfSymbols> {
    const uint64_t base = getauxval(AT_SYSINFO_EHDR);
    if (base == 0) return nullptr;
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
      if (line.find("[vdso]") == std::string::npos) continue;
      uint64_t start = 0, end = 0;
      if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64, &start, &end) !=
              2 ||
          start != base || end <= start) {
        return nullptr;
      }
      Status error = Status::Ok();
      return LoadImage(reinterpret_cast<const void*>(base), end - start,
                       &error);
    }
    return nullptr;
  }();
  return vdso;
}

// `elf` stays the caller's to end.
std::shared_ptr<ElfSymbols> ElfSymbols::FromElf(Elf* elf) {
  auto out = std::make_shared<ElfSymbols>();
  out->build_id_ = ReadBuildId(elf);
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) == 0) {
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr phdr;
      if (!gelf_getphdr(elf, static_cast<int>(i), &phdr)) continue;
      if (phdr.p_type != PT_LOAD || !(phdr.p_flags & PF_X)) continue;
      out->segments_.push_back({phdr.p_offset, phdr.p_vaddr, phdr.p_filesz});
    }
  }
  auto add = [&out](uint64_t address, uint64_t size, const char* name) {
    const size_t offset = out->names_.size();
    if (offset > std::numeric_limits<uint32_t>::max()) return;
    out->names_.append(name).push_back('\0');
    out->symbols_.push_back({address, size, static_cast<uint32_t>(offset)});
  };
  // .symtab has the local (static) functions too; .dynsym is what a
  // stripped binary keeps.
  if (!ReadSymbols(elf, SHT_SYMTAB, add)) {
    ReadSymbols(elf, SHT_DYNSYM, add);
  }
  std::sort(out->symbols_.begin(), out->symbols_.end(),
            [](const Symbol& a, const Symbol& b) {
              return a.address != b.address ? a.address < b.address
                                            : a.size > b.size;
            });
  out->symbols_.shrink_to_fit();
  out->names_.shrink_to_fit();
  return out;
}

bool ElfSymbols::OffsetToAddress(uint64_t offset, uint64_t* address) const {
  for (const Segment& s : segments_) {
    if (offset >= s.offset && offset < s.offset + s.filesz) {
      *address = offset - s.offset + s.vaddr;
      return true;
    }
  }
  return false;
}

const char* ElfSymbols::Lookup(uint64_t address) const {
  auto it = std::upper_bound(
      symbols_.begin(), symbols_.end(), address,
      [](uint64_t addr, const Symbol& s) { return addr < s.address; });
  if (it == symbols_.begin()) return nullptr;
  --it;
  // A zero-size symbol (hand-written assembly) covers up to the next one.
  if (it->size != 0 && address >= it->address + it->size) return nullptr;
  return names_.c_str() + it->name;
}

std::string Demangle(const std::string& name) {
  if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  char* demangled =
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !demangled) return name;
  std::string out(demangled);
  std::free(demangled);
  return out;
}

}  // namespace trainscope::profiler
