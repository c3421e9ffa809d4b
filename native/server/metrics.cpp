// GET /metrics: the counters as Prometheus text exposition (one HELP/TYPE pair per metric).
#include "native/server/metrics.h"

#include "core/base/status.h"

namespace ox::server {
namespace {

void add(std::string* out, const char* name, const char* type, const char* help, double value) {
  *out += strfmt("# HELP oxidize_%s %s\n# TYPE oxidize_%s %s\noxidize_%s %.17g\n", name, help, name, type, name, value);
}

double per_second(uint64_t tokens, uint64_t us) { return us == 0 ? 0.0 : tokens * 1e6 / static_cast<double>(us); }

}  // namespace

std::string Metrics::prometheus_text() const {
  std::string out;
  const uint64_t prompt = prompt_tokens_total.load(), generated = generated_tokens_total.load();
  const uint64_t prompt_us = prompt_us_total.load(), generate_us = generate_us_total.load();
  add(&out, "requests_total", "counter", "HTTP requests received.", requests_total.load());
  add(&out, "requests_rejected_total", "counter", "HTTP requests answered with an error status.",
      requests_rejected.load());
  add(&out, "generations_total", "counter", "Completions run in a slot.", generations_total.load());
  add(&out, "prompt_tokens_total", "counter", "Prompt tokens evaluated.", prompt);
  add(&out, "prompt_tokens_cached_total", "counter", "Prompt tokens reused from a slot's cache.",
      prompt_tokens_cached.load());
  add(&out, "tokens_predicted_total", "counter", "Generated tokens.", generated);
  add(&out, "prompt_seconds_total", "counter", "Forward time spent on prompt tokens.", prompt_us / 1e6);
  add(&out, "tokens_predicted_seconds_total", "counter", "Forward and sampling time of decode steps.",
      generate_us / 1e6);
  add(&out, "prompt_tokens_per_second", "gauge", "Average prompt throughput.", per_second(prompt, prompt_us));
  add(&out, "predicted_tokens_per_second", "gauge", "Average aggregate generation throughput.",
      per_second(generated, generate_us));
  add(&out, "batch_steps_total", "counter", "Batched forward passes.", batch_steps_total.load());
  add(&out, "batch_tokens_total", "counter", "Tokens in batched forward passes.", batch_tokens_total.load());
  add(&out, "context_shifts_total", "counter", "Context shifts of full slots (--context-shift).",
      context_shifts_total.load());
  add(&out, "embedding_requests_total", "counter", "Embedding and rerank requests answered.",
      embedding_requests_total.load());
  add(&out, "embedding_inputs_total", "counter", "Texts embedded and documents scored.", embedding_inputs_total.load());
  add(&out, "embedding_tokens_total", "counter", "Tokens of embedded texts and scored pairs.",
      embedding_tokens_total.load());
  add(&out, "embedding_seconds_total", "counter", "Time embedding and rerank requests took.",
      embedding_us_total.load() / 1e6);
  add(&out, "requests_deferred", "gauge", "Requests waiting for a free slot.", queue_depth.load());
  add(&out, "requests_processing", "gauge", "Slots generating.", slots_busy.load());
  add(&out, "slots", "gauge", "Slots (-np).", n_slots);
  return out;
}

}  // namespace ox::server
