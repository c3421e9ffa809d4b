// The stages that push logits down for what came before (repetition / frequency / presence
// penalties, DRY) and the user's logit biases, as llama.cpp's llama-sampler.cpp computes them.
#include <algorithm>
#include <cmath>

#include "core/sampler/stages.h"

namespace ox {
namespace {

// The last `last_n` tokens of history (-1: all of it).
std::span<const int32_t> window(std::span<const int32_t> history, int last_n) {
  if (last_n < 0 || static_cast<size_t>(last_n) >= history.size()) return history;
  return history.subspan(history.size() - static_cast<size_t>(last_n));
}

}  // namespace

void apply_logit_bias(Candidates& c, std::span<const LogitBias> biases) {
  for (const LogitBias& b : biases) {
    // Candidates not yet reordered sit at their id (llama.cpp's fast path), else search.
    if (b.token >= 0 && static_cast<size_t>(b.token) < c.size && c.data[b.token].id == b.token) {
      c.data[b.token].logit += b.bias;
      continue;
    }
    for (size_t i = 0; i < c.size; ++i) {
      if (c.data[i].id == b.token) {
        c.data[i].logit += b.bias;
        break;
      }
    }
  }
}

void apply_penalties(Candidates& c, std::span<const int32_t> history, int last_n, float repeat, float freq,
                     float present) {
  if (last_n == 0 || (repeat == 1.0f && freq == 0.0f && present == 0.0f)) return;
  std::unordered_map<int32_t, int> count;
  for (int32_t t : window(history, last_n)) ++count[t];
  if (count.empty()) return;
  for (size_t i = 0; i < c.size; ++i) {
    const auto it = count.find(c.data[i].id);
    if (it == count.end()) continue;
    float& l = c.data[i].logit;
    // Dividing a negative logit would make the token likelier: multiply those instead.
    l = l <= 0 ? l * repeat : l / repeat;
    l -= static_cast<float>(it->second) * freq + present;
  }
  c.sorted = false;
}

// llama_sampler_dry_apply (from koboldcpp, by pi6am). rat(i) is the i-th token from the end.
void apply_dry(Candidates& c, std::span<const int32_t> history, const DryParams& p, const DryBreakers& breakers) {
  if (p.multiplier == 0.0f || p.base < 1.0f || p.last_n == 0) return;
  const std::span<const int32_t> last = window(history, p.last_n);
  const int n = static_cast<int>(last.size());
  if (n <= p.allowed_length) return;
  auto rat = [&](int i) { return last[static_cast<size_t>(n - 1 - i)]; };

  // Step 1: the nearest sequence breaker limits how far back a repetition may reach.
  int rep_limit = n;
  for (int i = 0; i < n; ++i) {
    const auto range = breakers.equal_range(rat(i));
    int longest = -1;
    for (auto it = range.first; it != range.second; ++it) {
      const int seq_len = static_cast<int>(it->second.size());
      if (seq_len <= longest || seq_len > i) continue;
      bool match = true;
      for (int k = 0; k < seq_len && match; ++k) match = it->second[static_cast<size_t>(k)] == rat(i - k - 1);
      if (match) longest = seq_len;
    }
    if (longest >= 0) {
      rep_limit = i - longest;
      break;
    }
  }
  if (rep_limit < p.allowed_length) return;

  // Step 2: Z-algorithm from the end: repeat[last - k] = length of the suffix that also ends k
  // tokens earlier (capped at rep_limit).
  std::vector<int> repeat(static_cast<size_t>(n), 0);
  {
    const int end = n - 1;
    int rt = 0, lt = 0;
    for (int k = 1; k < n; ++k) {
      if (k > rt) {
        int len = 0;
        while (len + k < n && rat(len) == rat(len + k)) ++len;
        repeat[static_cast<size_t>(end - k)] = std::min(len, rep_limit);
        if (len > 0) {
          lt = k;
          rt = k + len - 1;
        }
      } else {
        const int pair = k - lt;
        const int right_len = rt - k + 1;
        if (repeat[static_cast<size_t>(end - pair)] < right_len) {
          repeat[static_cast<size_t>(end - k)] = std::min(repeat[static_cast<size_t>(end - pair)], rep_limit);
        } else {
          int i = rt + 1;
          while (i < n && rat(i) == rat(i - k)) ++i;
          repeat[static_cast<size_t>(end - k)] = std::min(i - k, rep_limit);
          lt = k;
          rt = i - 1;
        }
      }
    }
  }

  // Step 3: the token after each repeat would extend it; keep the longest per token.
  std::unordered_map<int32_t, int> max_repeat;
  for (int i = 0; i < n - 1; ++i) {
    const int len = repeat[static_cast<size_t>(i)];
    if (len < p.allowed_length) continue;
    const int32_t token = rat(n - 2 - i);
    auto it = max_repeat.find(token);
    if (it == max_repeat.end() || it->second < len) max_repeat[token] = len;
  }

  // Step 4: penalise, with the exponent capped so base^exp stays a finite float.
  constexpr float kFloatMaxLog = 88.7228391f;
  int max_exponent = 0;
  if (p.base > 1.000001f) max_exponent = static_cast<int>(kFloatMaxLog / std::log(p.base));
  for (size_t i = 0; i < c.size; ++i) {
    const auto it = max_repeat.find(c.data[i].id);
    if (it == max_repeat.end()) continue;
    bool single_token_breaker = false;
    const auto range = breakers.equal_range(c.data[i].id);
    for (auto b = range.first; b != range.second; ++b) single_token_breaker |= b->second.empty();
    if (single_token_breaker) continue;
    int exponent = it->second - p.allowed_length;
    if (max_exponent > 0 && exponent > max_exponent) exponent = max_exponent;
    c.data[i].logit -= p.multiplier * static_cast<float>(std::pow(p.base, exponent));
  }
  c.sorted = false;
}

DryBreakers build_dry_breakers(std::span<const std::string> breakers, int32_t n_vocab,
                               FunctionRef<std::string(int32_t)> token_text,
                               FunctionRef<std::vector<int32_t>(const std::string&)> tokenize) {
  constexpr size_t kMaxChars = 40;
  constexpr size_t kMaxTail = 20;
  DryBreakers out;
  for (std::string breaker : breakers) {
    if (breaker.empty()) continue;
    if (breaker.size() > kMaxChars) breaker.resize(kMaxChars);
    for (int32_t id = 0; id < n_vocab; ++id) {
      const std::string word = token_text(id);
      if (word.find(breaker) != std::string::npos) {
        out.emplace(id, std::vector<int32_t>());
        continue;
      }
      // The token ends with a prefix of the breaker: the rest of the breaker is its tail.
      for (size_t pos = word.find(breaker[0]); pos != std::string::npos; pos = word.find(breaker[0], pos + 1)) {
        size_t i = 1;
        bool match = true;
        for (; i < breaker.size() && pos + i < word.size(); ++i) {
          if (word[pos + i] != breaker[i]) {
            match = false;
            break;
          }
        }
        if (!match) continue;
        std::vector<int32_t> tail = tokenize(breaker.substr(i));
        if (tail.size() > kMaxTail) tail.resize(kMaxTail);
        bool seen = false;
        const auto range = out.equal_range(id);
        for (auto it = range.first; it != range.second && !seen; ++it) seen = it->second == tail;
        if (!seen) out.emplace(id, std::move(tail));
      }
    }
  }
  return out;
}

}  // namespace ox
