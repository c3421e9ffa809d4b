// DType facts and names, read from the format registry (formats.cpp).
#include "core/quant/dtype.h"

#include <cctype>

#include "core/quant/formats.h"

namespace ox {

const DTypeFacts& dtype_facts(DType type) { return format(type).facts; }

DType dtype_file_type(DType type) { return format(type).file_type; }

bool dtype_is_known(uint32_t raw) { return raw < kDTypeCount && dtype_facts(static_cast<DType>(raw)).known; }

bool dtype_from_name(std::string_view name, DType* out) {
  for (const Format& f : formats()) {
    if (!f.facts.known) continue;
    std::string_view candidate = f.facts.name;
    if (candidate.size() != name.size()) continue;
    bool same = true;
    for (size_t k = 0; k < name.size() && same; ++k) {
      same = std::toupper(static_cast<unsigned char>(name[k])) == candidate[k];
    }
    if (same) {
      *out = f.type;
      return true;
    }
  }
  return false;
}

}  // namespace ox
