// The format-facts table: block sizes and byte counts as GGUF defines them.
#include "core/quant/dtype.h"

#include <array>
#include <cctype>

namespace ox {
namespace {

constexpr DTypeFacts kUnknown = {"unknown", 1, 0, false, false};

constexpr std::array<DTypeFacts, kDTypeCount> make_table() {
  std::array<DTypeFacts, kDTypeCount> t{};
  for (auto& f : t) f = kUnknown;
  auto set = [&](DType d, const char* name, uint32_t bs, uint32_t ts, bool supported) {
    t[static_cast<uint32_t>(d)] = DTypeFacts{name, bs, ts, true, supported};
  };
  // name, block size, bytes per block, supported for compute
  set(DType::F32, "F32", 1, 4, true);
  set(DType::F16, "F16", 1, 2, true);
  set(DType::Q4_0, "Q4_0", 32, 2 + 16, true);
  set(DType::Q4_1, "Q4_1", 32, 2 + 2 + 16, true);
  set(DType::Q5_0, "Q5_0", 32, 2 + 4 + 16, true);
  set(DType::Q5_1, "Q5_1", 32, 2 + 2 + 4 + 16, true);
  set(DType::Q8_0, "Q8_0", 32, 2 + 32, true);
  set(DType::Q8_1, "Q8_1", 32, 2 + 2 + 32, true);
  set(DType::Q2_K, "Q2_K", 256, 16 + 64 + 2 + 2, true);
  set(DType::Q3_K, "Q3_K", 256, 32 + 64 + 12 + 2, true);
  set(DType::Q4_K, "Q4_K", 256, 2 + 2 + 12 + 128, true);
  set(DType::Q5_K, "Q5_K", 256, 2 + 2 + 12 + 32 + 128, true);
  set(DType::Q6_K, "Q6_K", 256, 128 + 64 + 16 + 2, true);
  set(DType::Q8_K, "Q8_K", 256, 4 + 256 + 32, true);
  set(DType::IQ2_XXS, "IQ2_XXS", 256, 2 + 64, false);
  set(DType::IQ2_XS, "IQ2_XS", 256, 2 + 64 + 8, false);
  set(DType::IQ3_XXS, "IQ3_XXS", 256, 2 + 96, false);
  set(DType::IQ1_S, "IQ1_S", 256, 2 + 32 + 16, false);
  set(DType::IQ4_NL, "IQ4_NL", 32, 2 + 16, true);
  set(DType::IQ3_S, "IQ3_S", 256, 2 + 64 + 32 + 8 + 4, false);
  set(DType::IQ2_S, "IQ2_S", 256, 2 + 64 + 8 + 8, false);
  set(DType::IQ4_XS, "IQ4_XS", 256, 2 + 2 + 4 + 128, true);
  set(DType::I8, "I8", 1, 1, false);
  set(DType::I16, "I16", 1, 2, false);
  set(DType::I32, "I32", 1, 4, false);
  set(DType::I64, "I64", 1, 8, false);
  set(DType::F64, "F64", 1, 8, false);
  set(DType::IQ1_M, "IQ1_M", 256, 32 + 16 + 8, false);
  set(DType::BF16, "BF16", 1, 2, true);
  set(DType::TQ1_0, "TQ1_0", 256, 48 + 4 + 2, true);
  set(DType::TQ2_0, "TQ2_0", 256, 64 + 2, true);
  set(DType::MXFP4, "MXFP4", 32, 1 + 16, true);
  // Internal layouts: not GGUF types (known = false: no file may name them), but computed with.
  t[static_cast<uint32_t>(DType::Q4_K_IL)] = DTypeFacts{"Q4_K_IL", 256, 2 + 2 + 12 + 128, false, true};
  t[static_cast<uint32_t>(DType::Q6_K_IL)] = DTypeFacts{"Q6_K_IL", 256, 128 + 64 + 16 + 2, false, true};
  return t;
}

constexpr std::array<DTypeFacts, kDTypeCount> kTable = make_table();

}  // namespace

const DTypeFacts& dtype_facts(DType type) {
  const uint32_t i = static_cast<uint32_t>(type);
  return i < kDTypeCount ? kTable[i] : kUnknown;
}

DType dtype_file_type(DType type) {
  switch (type) {
    case DType::Q4_K_IL: return DType::Q4_K;
    case DType::Q6_K_IL: return DType::Q6_K;
    default: return type;
  }
}

bool dtype_is_known(uint32_t raw) { return raw < kDTypeCount && kTable[raw].known; }

bool dtype_from_name(std::string_view name, DType* out) {
  for (uint32_t i = 0; i < kDTypeCount; ++i) {
    if (!kTable[i].known) continue;
    std::string_view candidate = kTable[i].name;
    if (candidate.size() != name.size()) continue;
    bool same = true;
    for (size_t k = 0; k < name.size() && same; ++k) {
      same = std::toupper(static_cast<unsigned char>(name[k])) == candidate[k];
    }
    if (same) {
      *out = static_cast<DType>(i);
      return true;
    }
  }
  return false;
}

}  // namespace ox
