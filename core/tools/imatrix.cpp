// compute_imatrix: llama-imatrix's collection (IMatrixCollector::collect_imatrix) as a MatmulObserver
// on the session's forward passes, and its chunk loop (compute_imatrix) over the text.
#include "core/tools/imatrix.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "core/base/memory.h"

namespace ox {
namespace {

// Sums x^2 per column of every block matrix (and output.weight when asked) over the tokens it sees.
class Collector final : public MatmulObserver {
 public:
  Collector(const gguf::GgufFile& file, bool process_output) : file_(file), process_output_(process_output) {}

  void observe(const Tensor& w, const float* x, int64_t n_tokens) override {
    const std::string_view name = w.name;
    // llama-imatrix keeps the matrices of the blocks (blk.*) and, if asked, the output projection.
    if (!status_.is_ok() || !(name.substr(0, 4) == "blk." || (process_output_ && name == "output.weight"))) return;
    auto it = entries_.find(name);
    if (it == entries_.end()) {
      const gguf::TensorInfo* info = file_.find_tensor(name);
      if (info == nullptr || static_cast<int64_t>(info->dims[0]) != w.cols) {
        status_ = error(ErrorCode::kInternal, strfmt("matmul weight '%.*s' is not a tensor of %s with rows of %lld",
                                                     static_cast<int>(name.size()), name.data(), file_.name().c_str(),
                                                     static_cast<long long>(w.cols)));
        return;
      }
      const int64_t n_mat = info->dims.size() > 2 ? static_cast<int64_t>(info->dims[2]) : 1;
      ImatrixEntry e;
      e.sums.assign(static_cast<size_t>(n_mat * w.cols), 0.0f);
      e.counts.assign(static_cast<size_t>(n_mat), 0);
      it = entries_.emplace(std::string(name), std::move(e)).first;
    }
    ImatrixEntry& e = it->second;
    OX_CHECK(w.mat >= 0 && static_cast<size_t>(w.mat) < e.counts.size());
    const int64_t cols = w.cols;
    float* acc = e.sums.data() + w.mat * cols;  // [cols]
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float* row = x + t * cols;
      for (int64_t j = 0; j < cols; ++j) acc[j] += row[j] * row[j];
    }
    e.counts[static_cast<size_t>(w.mat)] += n_tokens;
    for (int64_t j = 0; j < cols; ++j) {
      if (!std::isfinite(acc[j])) {
        status_ = error(ErrorCode::kInvalidFile,
                        strfmt("non-finite activations entering %.*s (column %lld): the model's weights or the "
                               "text overflow f32", static_cast<int>(name.size()), name.data(),
                               static_cast<long long>(j)));
        return;
      }
    }
  }

  const Status& status() const { return status_; }
  std::map<std::string, ImatrixEntry, std::less<>> take() { return std::move(entries_); }

 private:
  const gguf::GgufFile& file_;
  bool process_output_;
  std::map<std::string, ImatrixEntry, std::less<>> entries_;
  Status status_;
};

// Removes the observer from the session on every path out.
class ObserverScope {
 public:
  ObserverScope(Session& s, MatmulObserver* o) : s_(s) { s_.set_matmul_observer(o); }
  ~ObserverScope() { s_.set_matmul_observer(nullptr); }
  ObserverScope(const ObserverScope&) = delete;
  ObserverScope& operator=(const ObserverScope&) = delete;

 private:
  Session& s_;
};

Status check_options(const Session& session, const ImatrixOptions& o) {
  if (o.n_ctx < 1 || o.n_ctx > session.n_ctx()) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("imatrix chunk size %d is out of range: it must be at least 1 and at most the session's "
                        "context, %d", o.n_ctx, session.n_ctx()));
  }
  if (o.n_chunks == 0 || o.n_chunks < -1) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("chunk count %d is invalid: give a positive count, or -1 for every chunk", o.n_chunks));
  }
  if (o.from_chunk < 0) {
    return error(ErrorCode::kInvalidArgument, strfmt("first chunk %d is negative", o.from_chunk));
  }
  if (session.model().tokenizer().add_eos()) {
    return error(ErrorCode::kUnsupported, "this model's vocabulary appends EOS to every text; llama-imatrix refuses "
                                          "such a model too");
  }
  return Status::ok();
}

// The text's tokens after --chunk's skip, checked to hold two chunks (llama-imatrix's rules).
Result<std::vector<int32_t>> chunk_tokens(const Session& session, std::string_view text, const ImatrixOptions& o,
                                          int* n_tokens) {
  OX_ASSIGN_OR_RETURN(std::vector<int32_t> tokens, session.tokenize(text, /*add_special=*/true, o.parse_special));
  *n_tokens = static_cast<int>(std::min<size_t>(tokens.size(), INT32_MAX));
  const size_t n_ctx = static_cast<size_t>(o.n_ctx);
  if (o.from_chunk > 0) {
    if ((static_cast<size_t>(o.from_chunk) + 2) * n_ctx >= tokens.size()) {
      return error(ErrorCode::kInvalidArgument,
                   strfmt("the text tokenizes to %zu tokens: not enough left after skipping %d chunks of %d (--chunk)",
                          tokens.size(), o.from_chunk, o.n_ctx));
    }
    tokens.erase(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(o.from_chunk * n_ctx));
  }
  if (tokens.size() < 2 * n_ctx) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("the text tokenizes to only %zu tokens; an imatrix with chunks of %d (-c) needs at least %zu "
                        "(two chunks): give a longer text or a smaller -c", tokens.size(), o.n_ctx, 2 * n_ctx));
  }
  return tokens;
}

}  // namespace

Result<ImatrixResult> compute_imatrix(Session& session, std::string_view text, const ImatrixOptions& options,
                                      FunctionRef<bool(const ImatrixProgress&)> on_chunk) {
  OX_TRY(check_options(session, options));
  ImatrixResult result;
  OX_ASSIGN_OR_RETURN(const std::vector<int32_t> tokens, chunk_tokens(session, text, options, &result.n_tokens));
  const int n_ctx = options.n_ctx;
  const int n_chunk_max = static_cast<int>(tokens.size() / static_cast<size_t>(n_ctx));
  result.n_chunks = options.n_chunks < 0 ? n_chunk_max : std::min(options.n_chunks, n_chunk_max);

  const size_t n_vocab = static_cast<size_t>(session.model().hparams().n_vocab);
  // Scored positions [first, n_ctx - 1), each predicting the next token (llama-perplexity's rule).
  const int first = n_ctx / 2;
  const int n_scored = std::max(0, n_ctx - 1 - first);
  // --process-output needs the output projection of every token, so every row's logits.
  const int logits_from = options.process_output ? 0 : first;
  const bool want_logits = options.process_output || (options.compute_ppl && n_scored > 0);
  const size_t n_logits = want_logits ? static_cast<size_t>(n_ctx - logits_from) * n_vocab : 0;
  OX_TRY(check_memory(n_logits * sizeof(float),
                      strfmt("the logits of %d positions x %zu tokens", n_ctx - logits_from, n_vocab), "use a smaller -c"));
  std::vector<float> logits(n_logits);
  std::vector<int32_t> chunk(static_cast<size_t>(n_ctx));

  Collector collector(session.model().file(), options.process_output);
  const ObserverScope scope(session, &collector);
  for (int c = 0; c < result.n_chunks; ++c) {
    copy_chunk(tokens, c, session.model().tokenizer(), chunk);
    const auto t0 = std::chrono::steady_clock::now();
    OX_TRY(session.truncate(0));
    const std::span<const int32_t> all(chunk);
    if (!want_logits) {
      OX_TRY(session.eval(all));
    } else {
      if (logits_from > 0) OX_TRY(session.eval(all.first(static_cast<size_t>(logits_from))));
      OX_TRY(session.eval(all.subspan(static_cast<size_t>(logits_from)), logits.data()));
    }
    OX_TRY(collector.status());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (options.compute_ppl) {
      for (int r = 0; r < n_scored; ++r) {
        const size_t row = static_cast<size_t>(first - logits_from + r);
        const std::span<const float> l(logits.data() + row * n_vocab, n_vocab);
        result.stats.add(token_nll(l, chunk[static_cast<size_t>(first + r + 1)]));
      }
    }
    const ImatrixProgress progress{c + 1, result.n_chunks, options.compute_ppl ? result.stats.ppl() : 0.0, seconds};
    if (!on_chunk(progress)) {
      return error(ErrorCode::kAborted, strfmt("imatrix stopped after chunk %d of %d", c + 1, result.n_chunks));
    }
  }

  Imatrix& m = result.imatrix;
  for (auto& [name, e] : collector.take()) m.entries.emplace(name, std::move(e));
  if (!options.dataset.empty()) m.datasets.push_back(options.dataset);
  m.chunk_size = static_cast<uint32_t>(n_ctx);
  // llama-imatrix's chunk count: the largest token count of any matrix, in whole chunks.
  int64_t max_count = 0;
  for (const auto& [name, e] : m.entries) {
    for (int64_t count : e.counts) max_count = std::max(max_count, count);
  }
  m.chunk_count = static_cast<uint32_t>(max_count / n_ctx);
  return result;
}

}  // namespace ox
