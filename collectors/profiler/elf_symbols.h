#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "trainscope/status.h"

typedef struct Elf Elf;  // libelf

namespace trainscope::profiler {

// The function symbols of one ELF file (.symtab, else .dynsym) read with
// elfutils' libelf, plus what maps a file offset to a symbol address.
class ElfSymbols {
 public:
  static std::shared_ptr<const ElfSymbols> Load(
      const std::filesystem::path& path, Status* error);
  // The same from an ELF image in memory (this process's vDSO: the kernel
  // maps the same image into every process).
  static std::shared_ptr<const ElfSymbols> LoadImage(const void* image,
                                                     size_t size,
                                                     Status* error);
  // This process's vDSO, read once; null when it cannot be found.
  static std::shared_ptr<const ElfSymbols> Vdso();

  // Hex of the GNU build id note; "" when the file has none.
  const std::string& build_id() const { return build_id_; }
  // The virtual address (as symbols use it) of file offset `offset`, from
  // the PT_LOAD segment holding it; false when none does.
  bool OffsetToAddress(uint64_t offset, uint64_t* address) const;
  // The raw (mangled) name of the function containing `address`, valid as
  // long as this table; null when none does (stripped binary, or outside
  // every symbol).
  const char* Lookup(uint64_t address) const;
  size_t size() const { return symbols_.size(); }
  // Heap bytes of the table, for the cache's bound.
  size_t bytes() const {
    return symbols_.capacity() * sizeof(Symbol) + names_.capacity();
  }

 private:
  static std::shared_ptr<ElfSymbols> FromElf(Elf* elf);
  struct Symbol {
    uint64_t address;
    uint64_t size;
    uint32_t name;  // offset of its NUL-terminated name in names_
  };
  struct Segment {
    uint64_t offset;
    uint64_t vaddr;
    uint64_t filesz;
  };
  std::string build_id_;
  std::vector<Symbol> symbols_;  // sorted by address
  // Every name in one block rather than a string each (a library has
  // thousands): 24 bytes a symbol instead of 48, and no heap chunk per name
  // longer than 15 characters, which most mangled names are.
  std::string names_;
  std::vector<Segment> segments_;
};

// abi::__cxa_demangle, or `name` unchanged when it is not a C++ name.
std::string Demangle(const std::string& name);

}  // namespace trainscope::profiler
