// RecurrentState allocation and whole-sequence operations (clear, copy, the saved-state ranges).
#include "core/kv_cache/recurrent_state.h"

#include <cstring>

namespace ox {

Result<RecurrentState> RecurrentState::create(const RecurrentShape& shape) {
  if (shape.n_layer < 0 || shape.n_seq < 1 || shape.conv_dim < 0 || shape.ssm_dim < 0) {
    return error(ErrorCode::kInvalidArgument, strfmt("recurrent state of %d layers x %d sequences x (%lld + %lld) "
                                                     "floats is not a valid shape",
                                                     shape.n_layer, shape.n_seq, static_cast<long long>(shape.conv_dim),
                                                     static_cast<long long>(shape.ssm_dim)));
  }
  RecurrentState s;
  s.shape_ = shape;
  OX_ASSIGN_OR_RETURN(s.data_, BigBuffer::zeroed(shape.bytes()));
  return s;
}

void RecurrentState::clear(int seq) {
  OX_CHECK(seq >= 0 && seq < shape_.n_seq);
  if (empty()) return;
  for (int l = 0; l < shape_.n_layer; ++l) std::memset(base(l, seq), 0, layer_bytes());
}

void RecurrentState::copy(int src, int dst) {
  OX_CHECK(src >= 0 && src < shape_.n_seq && dst >= 0 && dst < shape_.n_seq);
  if (empty() || src == dst) return;
  for (int l = 0; l < shape_.n_layer; ++l) std::memcpy(base(l, dst), base(l, src), layer_bytes());
}

std::vector<std::span<const uint8_t>> RecurrentState::ranges(int seq) const {
  std::vector<std::span<const uint8_t>> out;
  if (empty()) return out;
  for (int l = 0; l < shape_.n_layer; ++l) {
    out.emplace_back(reinterpret_cast<const uint8_t*>(conv(l, seq)), static_cast<size_t>(layer_bytes()));
  }
  return out;
}

std::vector<std::span<uint8_t>> RecurrentState::mutable_ranges(int seq) {
  std::vector<std::span<uint8_t>> out;
  if (empty()) return out;
  for (int l = 0; l < shape_.n_layer; ++l) {
    out.emplace_back(reinterpret_cast<uint8_t*>(conv(l, seq)), static_cast<size_t>(layer_bytes()));
  }
  return out;
}

}  // namespace ox
