// Chooses the kernel table once: OXIDIZE_ISA / --isa override, else the platform's best.
#include "kernels/kernels.h"

#include <cstdlib>
#include <string>

#include "core/base/attention_ref.h"
#include "core/base/activation.h"

namespace ox::kernels {
namespace {
const KernelTable* g_override = nullptr;
}

const KernelTable& scalar::table() {
  static const KernelTable table = [] {
    KernelTable t;
    t.isa = "scalar";
    for (uint32_t i = 0; i < kDTypeCount; ++i) {
      const QuantTraits& q = quant_traits(static_cast<DType>(i));
      t.vec_dot[i] = q.vec_dot_ref;
      t.quantize_row[i] = q.from_float_ref;
      t.to_float[i] = q.to_float;
    }
    t.silu_mul = silu_mul_ref;
    t.gelu = gelu_ref;
    t.attn_accumulate = attn_accumulate_ref;
    t.attn_softmax = attn_softmax_ref;
    return t;
  }();
  return table;
}

const std::vector<const KernelTable*>& all_kernels() {
  static const std::vector<const KernelTable*> tables = platform_tables();
  return tables;
}

Result<const KernelTable*> kernels_by_name(std::string_view isa) {
  std::string names;
  for (const KernelTable* t : all_kernels()) {
    if (isa == t->isa) return t;
    names += names.empty() ? "" : ", ";
    names += t->isa;
  }
  return error(ErrorCode::kInvalidArgument,
               strfmt("unknown or unsupported ISA '%.*s' (this CPU runs: %s)", static_cast<int>(isa.size()),
                      isa.data(), names.c_str()));
}

Status set_isa_override(std::string_view isa) {
  OX_ASSIGN_OR_RETURN(const KernelTable* t, kernels_by_name(isa));
  g_override = t;
  return Status::ok();
}

const KernelTable& best_kernels() {
  if (g_override != nullptr) return *g_override;
  static const KernelTable* chosen = [] {
    const char* env = std::getenv("OXIDIZE_ISA");
    if (env != nullptr && *env != '\0') {
      Result<const KernelTable*> r = kernels_by_name(env);
      if (r.ok()) return r.value();
      std::fprintf(stderr, "oxidize: OXIDIZE_ISA: %s; using the best available\n", r.status().message().c_str());
    }
    return all_kernels().back();
  }();
  return *chosen;
}

}  // namespace ox::kernels
