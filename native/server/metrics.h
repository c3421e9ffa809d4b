// Server counters and gauges, updated by the HTTP threads and the batch loop, rendered as
// Prometheus text for GET /metrics (names in llama-server's spirit, prefixed oxidize_).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace ox::server {

struct Metrics {
  std::atomic<uint64_t> requests_total{0};        // every HTTP request routed
  std::atomic<uint64_t> requests_rejected{0};     // answered with a 4xx/5xx status
  std::atomic<uint64_t> generations_total{0};     // completions that ran in a slot
  std::atomic<uint64_t> prompt_tokens_total{0};   // prompt tokens evaluated (cached prefix excluded)
  std::atomic<uint64_t> prompt_tokens_cached{0};  // prompt tokens reused from a slot's cache
  std::atomic<uint64_t> generated_tokens_total{0};
  std::atomic<uint64_t> prompt_us_total{0};       // forward time attributed to prefill
  std::atomic<uint64_t> generate_us_total{0};     // forward + sampling time of decode steps
  std::atomic<uint64_t> batch_steps_total{0};     // forward passes
  std::atomic<uint64_t> batch_tokens_total{0};    // tokens in those passes
  std::atomic<uint64_t> context_shifts_total{0};  // slots whose full context was shifted (--context-shift)
  std::atomic<uint64_t> embedding_requests_total{0};  // /v1/embeddings and /v1/rerank answered
  std::atomic<uint64_t> embedding_inputs_total{0};    // texts embedded or documents scored
  std::atomic<uint64_t> embedding_tokens_total{0};
  std::atomic<uint64_t> embedding_us_total{0};        // time those requests took, waiting included
  std::atomic<int64_t> queue_depth{0};            // requests waiting for a slot
  std::atomic<int64_t> slots_busy{0};
  int n_slots = 0;

  std::string prometheus_text() const;
};

}  // namespace ox::server
