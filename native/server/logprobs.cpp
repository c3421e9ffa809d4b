// Token log probabilities for the server's responses (see logprobs.h).
#include "native/server/logprobs.h"

#include <cmath>
#include <limits>
#include <string>

#include "core/tokenizer/stream_decoder.h"

namespace ox::server {
namespace {

using Json = nlohmann::ordered_json;

// As llama-server's completion_token_output::logarithm: -inf (a logit of -inf) becomes the lowest
// float, which JSON can hold.
float finite_or_lowest(float logp) { return std::isfinite(logp) ? logp : std::numeric_limits<float>::lowest(); }

std::string piece_of(const tok::Tokenizer& tokenizer, int32_t id, bool render_special) {
  Result<std::string> piece = tokenizer.token_to_piece(id, render_special);
  return piece.ok() ? std::move(piece).value() : std::string();
}

// As llama-server: `token` is the piece cut before an unfinished UTF-8 sequence, `bytes` all of it.
Json text_of(const std::string& piece) { return piece.substr(0, tok::complete_utf8_prefix(piece)); }

Json bytes_of(const std::string& piece) {
  Json out = Json::array();
  for (char c : piece) out.push_back(static_cast<unsigned char>(c));
  return out;
}

}  // namespace

TokenLogprob token_logprob(const TokenProbs& probs, const tok::Tokenizer& tokenizer, int n_top, bool render_special) {
  TokenLogprob out;
  out.piece = piece_of(tokenizer, probs.token, render_special);
  out.logprob = finite_or_lowest(probs.logp);
  const size_t n = std::min(probs.top.size(), static_cast<size_t>(std::max(n_top, 0)));
  for (size_t i = 0; i < n; ++i) {
    out.top.emplace_back(piece_of(tokenizer, probs.top[i].id, render_special), finite_or_lowest(probs.top[i].logp));
  }
  return out;
}

Json chat_logprobs(const std::vector<TokenLogprob>& tokens) {
  Json content = Json::array();
  for (const TokenLogprob& t : tokens) {
    Json top = Json::array();
    for (const auto& [piece, lp] : t.top) top.push_back({{"token", text_of(piece)}, {"logprob", lp}, {"bytes", bytes_of(piece)}});
    content.push_back(
        {{"token", text_of(t.piece)}, {"logprob", t.logprob}, {"bytes", bytes_of(t.piece)}, {"top_logprobs", std::move(top)}});
  }
  return {{"content", std::move(content)}, {"refusal", nullptr}};
}

Json completion_logprobs(const std::vector<TokenLogprob>& tokens, size_t* offset) {
  Json text = Json::array(), lps = Json::array(), tops = Json::array(), offsets = Json::array();
  for (const TokenLogprob& t : tokens) {
    text.push_back(text_of(t.piece));
    lps.push_back(t.logprob);
    Json top = Json::object();
    for (const auto& [piece, lp] : t.top) {
      const std::string key = text_of(piece).get<std::string>();
      if (!top.contains(key)) top[key] = lp;  // two tokens with one text: the likelier one
    }
    tops.push_back(std::move(top));
    offsets.push_back(*offset);
    *offset += t.piece.size();
  }
  return {{"tokens", std::move(text)}, {"token_logprobs", std::move(lps)}, {"top_logprobs", std::move(tops)},
          {"text_offset", std::move(offsets)}};
}

}  // namespace ox::server
