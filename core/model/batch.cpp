// Model::forward_batch and its checks (continuous batching: tokens of several sequences in one
// pass), and Model::forward, the batch of one run that a single-sequence session submits.
#include "core/model/batch.h"

#include <algorithm>

#include "core/model/model.h"

namespace ox {

size_t split_runs(std::span<const BatchToken> batch, std::span<SeqRun> runs) {
  OX_CHECK(runs.size() >= batch.size());
  size_t n_runs = 0;
  for (size_t t = 0; t < batch.size(); ++t) {
    const BatchToken& b = batch[t];
    SeqRun* last = n_runs > 0 ? &runs[n_runs - 1] : nullptr;
    if (last != nullptr && last->seq == b.seq && last->pos0 + last->n == b.pos) {
      ++last->n;
    } else {
      runs[n_runs++] = SeqRun{b.seq, b.pos, static_cast<int64_t>(t), 1};
    }
  }
  return n_runs;
}

Status Model::check_batch(const ForwardState& st, std::span<const BatchToken> batch) const {
  const int64_t n = static_cast<int64_t>(batch.size());
  if (n < 1 || n > st.max_batch) {
    return error(ErrorCode::kInvalidArgument, strfmt("a batch of %lld tokens: it must hold 1 to %d (the batch size)",
                                                     static_cast<long long>(n), st.max_batch));
  }
  const KvCache& kv = st.kv;
  for (int64_t t = 0; t < n; ++t) {
    const BatchToken& b = batch[static_cast<size_t>(t)];
    if (b.token < 0 || b.token >= hparams_.n_vocab) {
      return error(ErrorCode::kInvalidArgument,
                   strfmt("batch token %lld: id %d is out of range (vocabulary has %d tokens)",
                          static_cast<long long>(t), b.token, hparams_.n_vocab));
    }
    if (Status s = kv.check_seq(b.seq); !s.is_ok()) {
      return s.with_context(strfmt("batch token %lld", static_cast<long long>(t)));
    }
    // The sequence continues after its previous token in this batch (already checked), or else
    // after the positions the cache holds for it.
    int64_t next = kv.n_pos(b.seq);
    for (int64_t u = t - 1; u >= 0; --u) {
      if (batch[static_cast<size_t>(u)].seq == b.seq) {
        next = batch[static_cast<size_t>(u)].pos + 1;
        break;
      }
    }
    if (b.pos != next) {
      return error(ErrorCode::kOutOfRange,
                   strfmt("batch token %lld: position %lld does not continue sequence %d, whose next position is "
                          "%lld (remove positions with seq_rm to go back)",
                          static_cast<long long>(t), static_cast<long long>(b.pos), b.seq,
                          static_cast<long long>(next)));
    }
    if (b.pos >= kv.n_ctx()) {
      return error(ErrorCode::kOutOfRange,
                   strfmt("batch token %lld: position %lld of sequence %d is past the context of %d positions",
                          static_cast<long long>(t), static_cast<long long>(b.pos), b.seq, kv.n_ctx()));
    }
  }
  return Status::ok();
}

Status Model::forward_batch(ForwardState& st, std::span<const BatchToken> batch, float* logits) const {
  OX_TRY(check_batch(st, batch));
  // Each sequence's rows for its tokens (positions ascend from n_pos within a sequence).
  std::vector<int64_t> count(static_cast<size_t>(st.kv.n_seq()), 0);
  for (const BatchToken& b : batch) ++count[static_cast<size_t>(b.seq)];
  for (int s = 0; s < st.kv.n_seq(); ++s) {
    if (count[static_cast<size_t>(s)] > 0) st.kv.make_room(s, st.kv.n_pos(s), count[static_cast<size_t>(s)]);
  }
  // Single tokens of several sequences (a decode step of several slots): each gets its solo bits.
  const bool singles = batch.size() > 1 && std::all_of(count.begin(), count.end(), [](int64_t c) { return c <= 1; });
  st.ops.one_token_bits = singles;
  forward_(*this, st, batch, logits);
  st.ops.one_token_bits = false;
  // Positions ascend within a sequence, so the last one written is the sequence's end.
  for (const BatchToken& b : batch) st.kv.set_n_pos(b.seq, b.pos + 1);
  return Status::ok();
}

void Model::forward(ForwardState& st, std::span<const int32_t> tokens, int64_t pos0, bool all_logits,
                    float* logits) const {
  const int64_t n = static_cast<int64_t>(tokens.size());
  OX_CHECK(n >= 1 && n <= st.max_batch);
  OX_CHECK(pos0 >= 0 && pos0 <= st.kv.n_pos(0) && pos0 + n <= st.kv.n_ctx());
  // A recurrent state cannot go back: it continues its sequence or starts it again at 0.
  OX_CHECK(!st.kv.has_recurrent() || pos0 == 0 || pos0 == st.kv.n_pos(0));
  for (int64_t t = 0; t < n; ++t) {
    const bool logits_row = all_logits || t == n - 1;
    st.batch[static_cast<size_t>(t)] = BatchToken{tokens[static_cast<size_t>(t)], 0, pos0 + t, logits_row};
  }
  st.kv.make_room(0, pos0, n);
  forward_(*this, st, std::span<const BatchToken>(st.batch.data(), static_cast<size_t>(n)), logits);
  st.kv.set_n_pos(0, pos0 + n);
}

}  // namespace ox
