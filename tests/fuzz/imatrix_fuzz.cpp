// libFuzzer target: arbitrary bytes -> parse_imatrix (GGUF or legacy .dat). An accepted input must
// hold only what the reader promises (entries with counts dividing the sums, finite non-negative
// values), give importance vectors of the sums' size, and write back to a file that reads the same.
#include <cmath>
#include <cstdint>
#include <span>

#include "core/tools/imatrix_file.h"
#include "tests/fuzz/fuzz_support.h"

namespace ox {
namespace {

void check_accepted(const Imatrix& m) {
  OX_CHECK(!m.entries.empty());
  for (const auto& [name, e] : m.entries) {
    OX_CHECK(!name.empty() && !e.counts.empty() && !e.sums.empty());
    OX_CHECK(e.sums.size() % e.counts.size() == 0);
    for (float v : e.sums) OX_CHECK(std::isfinite(v) && v >= 0);
    for (int64_t c : e.counts) OX_CHECK(c >= 0);
    const std::vector<float> imp = imatrix_importance(m, e);
    OX_CHECK(imp.size() == e.sums.size());
    for (float v : imp) OX_CHECK(std::isfinite(v) && v >= 0);
  }
}

// Written back in its own format, the file must read back to the same statistics.
void check_round_trip(const Imatrix& m) {
  const ImatrixFormat format = m.legacy ? ImatrixFormat::kDat : ImatrixFormat::kGguf;
  Result<std::vector<uint8_t>> bytes = imatrix_to_bytes(m, format);
  if (!bytes.ok()) return;  // e.g. an entry no token reached, left out of .dat: nothing to compare
  Result<Imatrix> back = parse_imatrix(*bytes, "round-trip");
  OX_CHECK(back.ok());
  OX_CHECK(back->legacy == m.legacy && back->chunk_count == m.chunk_count);
  for (const auto& [name, e] : back->entries) {
    const auto it = m.entries.find(name);
    OX_CHECK(it != m.entries.end() && it->second.sums == e.sums && it->second.counts == e.counts);
  }
  if (!m.legacy) OX_CHECK(back->entries.size() == m.entries.size() && back->datasets == m.datasets);
}

}  // namespace
}  // namespace ox

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ox::Result<ox::Imatrix> m = ox::parse_imatrix(std::span<const uint8_t>(data, size), "fuzz.imatrix");
  if (!m.ok()) {
    OX_CHECK(!m.status().message().empty());
    return 0;
  }
  ox::check_accepted(*m);
  ox::check_round_trip(*m);
  return 0;
}
