// `oxidize embed` (llama-embedding's flags and output shapes: examples/embedding/embedding.cpp) and
// `oxidize rerank` (one relevance score per document line, best first). core/session/embedding.h
// does the work.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/base/cpu_info.h"
#include "core/session/embedding.h"
#include "core/session/embedding_api.h"
#include "core/session/session.h"
#include "kernels/kernels.h"
#include "native/commands.h"

namespace ox::cli {
namespace {

// llama-embedding's split_lines: every piece between separators, the last one included.
std::vector<std::string> split_on(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t end = s.find(sep); end != std::string::npos; end = s.find(sep, start)) {
    out.push_back(s.substr(start, end - start));
    start = end + sep.size();
  }
  out.push_back(s.substr(start));
  return out;
}

// -m, -c, -t, --isa and the pooling: the model opened as an embedder.
Result<std::unique_ptr<Embedder>> open_embedder(Args& args, Pooling pooling) {
  OX_ASSIGN_OR_RETURN(std::string path, args.string({"-m", "--model"}, ""));
  if (path.empty()) return error(ErrorCode::kInvalidArgument, "no model given: pass -m MODEL.gguf");
  OX_ASSIGN_OR_RETURN(std::string isa, args.string({"--isa"}, ""));
  if (!isa.empty()) OX_TRY(kernels::set_isa_override(isa));
  EmbedderOptions options;
  OX_ASSIGN_OR_RETURN(int64_t n_ctx, args.integer({"-c", "--ctx-size"}, 0, 0, 1 << 24));
  OX_ASSIGN_OR_RETURN(int64_t n_threads, args.integer({"-t", "--threads"}, default_thread_count(), 1, 256));
  options.n_ctx = static_cast<int>(n_ctx);
  options.n_threads = static_cast<int>(n_threads);
  options.pooling = pooling;
  OX_ASSIGN_OR_RETURN(std::shared_ptr<const LoadedModel> model, LoadedModel::open(path));
  return Embedder::create(model, options);
}

// The vectors in llama-embedding's --embd-output-format shapes ("" its default listing).
void print_embeddings(const EmbeddingResult& r, const std::vector<std::string>& prompts, const std::string& format,
                      int normalize) {
  const int n = r.n_embd;
  const int count = static_cast<int>(r.vectors.size());
  const char* value_fmt = normalize == 0 ? "%1.0f" : "%1.7f";
  auto cosine = [&](int i, int j) { return cosine_similarity(r.vectors[i].data(), r.vectors[j].data(), n); };
  if (format.empty()) {
    const char* short_fmt = normalize == 0 ? "%6.0f " : "%9.6f ";
    std::printf("\n");
    if (r.pooling == Pooling::kNone) {
      for (int j = 0; j < count; ++j) {
        std::printf("embedding %d: ", j);
        for (int i = 0; i < std::min(3, n); ++i) std::printf(short_fmt, r.vectors[j][i]);
        std::printf(" ... ");
        for (int i = n - 3; i < n; ++i) std::printf(short_fmt, r.vectors[j][i]);
        std::printf("\n");
      }
    } else if (r.pooling == Pooling::kRank) {
      for (int j = 0; j < count; ++j) std::printf("rerank score %d: %8.3f\n", j, r.vectors[j][0]);
    } else {
      const int n_prompts = static_cast<int>(prompts.size());
      for (int j = 0; j < count; ++j) {
        std::printf("embedding %d: ", j);
        for (int i = 0; i < (n_prompts > 1 ? std::min(16, n) : n); ++i) std::printf(short_fmt, r.vectors[j][i]);
        std::printf("\n");
      }
      if (n_prompts > 1) {
        std::printf("\ncosine similarity matrix:\n\n");
        for (const std::string& p : prompts) std::printf("%6.6s ", p.c_str());
        std::printf("\n");
        for (int i = 0; i < count; ++i) {
          for (int j = 0; j < count; ++j) std::printf("%6.2f ", cosine(i, j));
          std::printf("%1.10s\n", prompts[static_cast<size_t>(i)].c_str());
        }
      }
    }
    return;
  }
  if (format == "raw") {
    for (int j = 0; j < count; ++j) {
      for (int i = 0; i < n; ++i) {
        std::printf(value_fmt, r.vectors[j][i]);
        if (i + 1 < n) std::printf(" ");
      }
      std::printf("\n");
    }
    return;
  }
  const bool json = format != "array";
  std::printf(json ? "{\n  \"object\": \"list\",\n  \"data\": [\n" : "[");
  for (int j = 0; j < count; ++j) {
    if (json) std::printf("    {\n      \"object\": \"embedding\",\n      \"index\": %d,\n      \"embedding\": ", j);
    std::printf("[");
    for (int i = 0; i < n; ++i) {
      std::printf(value_fmt, r.vectors[j][i]);
      if (i + 1 < n) std::printf(",");
    }
    std::printf(json ? "]\n    }" : "]");
    if (j + 1 < count) std::printf(json ? ",\n" : ",");
  }
  std::printf(json ? "\n  ]" : "]\n");
  if (format == "json+" && prompts.size() > 1) {
    std::printf(",\n  \"cosineSimilarity\": [\n");
    for (int i = 0; i < count; ++i) {
      std::printf("    [");
      for (int j = 0; j < count; ++j) std::printf(j + 1 < count ? "%6.2f, " : "%6.2f", cosine(i, j));
      std::printf(i + 1 < count ? " ],\n" : " ]");
    }
    std::printf("\n  ]");
  }
  if (json) std::printf("\n}\n");
}

Result<Pooling> pooling_arg(Args& args) {
  OX_ASSIGN_OR_RETURN(std::string name, args.string({"--pooling"}, ""));
  if (name.empty()) return Pooling::kUnspecified;
  return parse_pooling(name, "--pooling");
}

}  // namespace

Status cmd_embed(Args& args) {
  OX_ASSIGN_OR_RETURN(std::string text, prompt_text(args));
  if (text.empty()) return error(ErrorCode::kInvalidArgument, "nothing to embed: pass -p TEXT or -f FILE");
  if (args.has({"-f", "--file"}) && text.back() == '\n') text.pop_back();  // as llama.cpp reads -f
  OX_ASSIGN_OR_RETURN(std::string separator, args.string({"--embd-separator"}, "\n"));
  if (separator.empty()) return error(ErrorCode::kInvalidArgument, "--embd-separator: the separator is empty");
  OX_ASSIGN_OR_RETURN(int64_t normalize, args.integer({"--embd-normalize"}, kNormalizeEuclidean, -1, 1 << 20));
  OX_ASSIGN_OR_RETURN(std::string format, args.string({"--embd-output-format"}, ""));
  if (!format.empty() && format != "array" && format != "json" && format != "json+" && format != "raw") {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("--embd-output-format: unknown format '%s' (array, json, json+, raw)", format.c_str()));
  }
  OX_ASSIGN_OR_RETURN(std::string cls_separator, args.string({"--cls-separator"}, "\t"));
  if (cls_separator.empty()) return error(ErrorCode::kInvalidArgument, "--cls-separator: the separator is empty");
  const bool truncate = args.flag({"--truncate"});
  OX_ASSIGN_OR_RETURN(Pooling pooling, pooling_arg(args));
  OX_ASSIGN_OR_RETURN(std::unique_ptr<Embedder> embedder, open_embedder(args, pooling));
  OX_TRY(args.finish());
  const std::vector<std::string> prompts = split_on(text, separator);
  EmbedParams params;
  params.normalize = static_cast<int>(normalize);
  params.truncate = truncate;
  const auto t0 = std::chrono::steady_clock::now();
  EmbeddingResult r;
  if (embedder->pooling() == Pooling::kRank) {
    // As llama-embedding: a line "query<cls-separator>document" is scored as a (query, document) pair.
    std::vector<std::vector<int32_t>> inputs;
    for (size_t i = 0; i < prompts.size(); ++i) {
      const std::string& p = prompts[i];
      if (p.empty()) return error(ErrorCode::kInvalidArgument, strfmt("input %zu is empty: there is nothing to embed", i));
      const size_t at = p.find(cls_separator);
      if (at == std::string::npos) {
        OX_ASSIGN_OR_RETURN(std::vector<int32_t> ids, embedder->model().tokenizer().encode(p, true, true));
        inputs.push_back(std::move(ids));
      } else {
        OX_ASSIGN_OR_RETURN(std::vector<int32_t> ids,
                            embedder->rerank_tokens(p.substr(0, at), p.substr(at + cls_separator.size())));
        inputs.push_back(std::move(ids));
      }
    }
    OX_ASSIGN_OR_RETURN(r, embedder->embed_tokens(inputs, params));
  } else {
    OX_ASSIGN_OR_RETURN(r, embedder->embed(prompts, params));
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  print_embeddings(r, prompts, format, params.normalize);
  std::printf("\n");  // llama-embedding ends every format with an empty line
  std::fflush(stdout);
  // The time line (tokenizing and embedding, the model already loaded) is what bench/embeddings.sh reads.
  std::fprintf(stderr, "embed: %zu inputs, %lld tokens, %d forward passes, pooling %s, n_ctx %d, kernels %s\n"
               "embed: %.2f ms, %.1f embeddings/s, %.1f tokens/s\n",
               prompts.size(), static_cast<long long>(r.total_tokens), r.n_forward_passes, pooling_name(r.pooling),
               embedder->n_ctx(), kernels::best_kernels().isa, ms, prompts.size() * 1000.0 / ms,
               static_cast<double>(r.total_tokens) * 1000.0 / ms);
  return Status::ok();
}

Status cmd_rerank(Args& args) {
  OX_ASSIGN_OR_RETURN(std::string query, args.string({"--query"}, ""));
  if (query.empty()) return error(ErrorCode::kInvalidArgument, "no query given: pass --query TEXT");
  if (!args.has({"-f", "--file"})) {
    return error(ErrorCode::kInvalidArgument, "no documents given: pass -f FILE with one document per line");
  }
  OX_ASSIGN_OR_RETURN(std::string path, args.string({"-f", "--file"}, ""));
  OX_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  if (!text.empty() && text.back() == '\n') text.pop_back();
  const bool truncate = args.flag({"--truncate"});
  OX_ASSIGN_OR_RETURN(std::unique_ptr<Embedder> embedder, open_embedder(args, Pooling::kRank));
  OX_TRY(args.finish());
  const std::vector<std::string> documents = split_on(text, "\n");
  OX_ASSIGN_OR_RETURN(RerankResult r, embedder->rerank(query, documents, truncate));
  // Best first, as llama-server's /v1/rerank and engine.rerank() order them; the line keeps the input index.
  for (const RankedDocument& d : rank_documents(r.scores, 0)) {
    std::printf("%d\t%.6f\t%s\n", d.index, d.score, documents[static_cast<size_t>(d.index)].c_str());
  }
  std::fflush(stdout);
  std::fprintf(stderr, "rerank: %zu documents, %lld tokens\n", documents.size(), static_cast<long long>(r.total_tokens));
  return Status::ok();
}

}  // namespace ox::cli
