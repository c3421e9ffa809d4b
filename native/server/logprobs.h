// Log probabilities of generated tokens (`logprobs` / `top_logprobs`) in OpenAI's two shapes: chat's
// `logprobs.content[]` entries and the legacy completions object (tokens, token_logprobs,
// top_logprobs, text_offset). The numbers are core/sampler's n_probs: the softmax of the raw logits,
// as llama-server reports them by default (post_sampling_probs off).
#pragma once

#include <cstddef>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/sampler/sampler.h"
#include "core/tokenizer/tokenizer.h"
#include "native/server/job.h"

namespace ox::server {

// The sampled token's entry from the sampler's probabilities; n_top alternatives at most.
TokenLogprob token_logprob(const TokenProbs& probs, const tok::Tokenizer& tokenizer, int n_top, bool render_special);

// chat: {"content": [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}], "refusal": null}
nlohmann::ordered_json chat_logprobs(const std::vector<TokenLogprob>& tokens);

// completions: {tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}. text_offset
// counts UTF-8 bytes of the generated text (no echo: the first token is at 0); *offset is where the
// first of `tokens` starts and is advanced past them (streaming continues from chunk to chunk).
nlohmann::ordered_json completion_logprobs(const std::vector<TokenLogprob>& tokens, size_t* offset);

}  // namespace ox::server
