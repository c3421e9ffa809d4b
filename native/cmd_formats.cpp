// `oxidize formats`: the format registry (core/quant/formats.h) as a markdown table, with the
// kernel tables of this build and CPU that accelerate each weight format.
#include <cstdio>
#include <string>
#include <vector>

#include "core/quant/formats.h"
#include "kernels/coverage.h"
#include "native/commands.h"

namespace ox::cli {
namespace {

const char* quantizer_text(const Format& f) {
  if (f.traits.needs_importance) return "needs imatrix";
  if (f.traits.quantize_rows != nullptr) return "imatrix-aware";
  if (f.traits.from_float_ref != nullptr) return "plain";
  return "-";
}

std::string row(const std::vector<std::string>& cells) {
  std::string out = "|";
  for (const std::string& c : cells) out += " " + c + " |";
  return out + "\n";
}

}  // namespace

Status cmd_formats(Args& args) {
  const bool coverage_only = args.flag({"--coverage"});
  OX_TRY(args.finish());
  std::vector<std::string> header = {"format"};
  if (!coverage_only) {
    for (const char* h : {"GGUF id", "block", "bytes", "bits/weight", "activations", "quantizer"}) header.push_back(h);
  }
  for (const std::string& isa : kernels::simd_table_names()) header.push_back(isa);
  std::string out = row(header);
  out += row(std::vector<std::string>(header.size(), "---"));
  for (const DType t : weight_formats()) {
    const Format& f = format(t);
    std::vector<std::string> cells = {f.facts.name};
    if (!coverage_only) {
      cells.push_back(std::to_string(static_cast<uint32_t>(t)));
      cells.push_back(std::to_string(f.facts.block_size));
      cells.push_back(std::to_string(f.facts.type_size));
      cells.push_back(strfmt("%.4g", 8.0 * f.facts.type_size / f.facts.block_size));
      cells.push_back(dtype_name(f.traits.vec_dot_type));
      cells.push_back(quantizer_text(f));
    }
    for (const kernels::SlotCoverage& c : kernels::format_coverage(t)) cells.push_back(kernels::coverage_cell(c));
    out += row(cells);
  }
  if (std::fputs(out.c_str(), stdout) < 0 || std::fflush(stdout) != 0) {
    return error(ErrorCode::kIo, "writing to standard output failed");
  }
  return Status::ok();
}

}  // namespace ox::cli
