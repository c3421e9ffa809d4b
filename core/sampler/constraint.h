// TokenConstraint: a sampler stage that decides which tokens may come next (a grammar, a JSON
// schema compiled to one). The sampler chain calls apply() on its candidate list after the other
// stages have narrowed it, draws a token, then tells the constraint with accept(). Implementations
// live next to this header (grammar*.h); the chain only knows this interface.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/base/status.h"

namespace ox {

// One entry of the candidate list the sampler stages narrow (logit, then probability once a stage
// has computed the softmax).
struct TokenCandidate {
  int32_t id;
  float logit;
  float p;
};

class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;
  // Sets the logit of every candidate the constraint does not allow next to -infinity.
  virtual void apply(std::span<TokenCandidate> candidates) = 0;
  // The token was chosen: advance. An error if the token was not allowed (nothing changes then).
  virtual Status accept(int32_t token) = 0;
  // True when the text so far is a complete sentence of the language (end of generation allowed).
  virtual bool can_end() const = 0;
  // Back to the start state (a new generation).
  virtual void reset() = 0;
  // Why nothing may come next, when the constraint knows more than "its language ends here"
  // (empty: it does not).
  virtual std::string why_nothing_allowed() const { return {}; }
};

}  // namespace ox
