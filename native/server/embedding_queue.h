// The server's embedder (`oxidize serve --embeddings` / `--rerank`): one Embedder, used by one
// request at a time in arrival order. Requests run on their HTTP worker thread with the embedder's
// own thread pool; a request's inputs are packed into as few forward passes as its context allows,
// and requests are not batched with each other. At most max_waiting wait; beyond that: 503.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "core/session/embedding.h"
#include "native/server/scheduler.h"
#include "native/server/server.h"

namespace ox::server {

class EmbeddingQueue {
 public:
  EmbeddingQueue(std::unique_ptr<Embedder> embedder, int max_waiting);
  // The embedder of `oxidize serve --embeddings | --rerank`: -c (0: the model's context, at most
  // EmbedderOptions::kDefaultMaxContext) positions per forward pass, -t threads, --pooling (--rerank:
  // rank). The core's error when the model cannot embed (no pooling, no classification head).
  static Result<std::unique_ptr<EmbeddingQueue>> create(std::shared_ptr<const LoadedModel> model,
                                                        const ServerOptions& options);

  const Embedder& embedder() const { return *embedder_; }
  // Waits for its turn and runs `work` with the embedder (kQueued: it ran). kQueueFull without
  // waiting when max_waiting requests already wait; kShuttingDown once shutdown() was called.
  Admission run(const std::function<void(Embedder&)>& work);
  // Requests still waiting return kShuttingDown; the one running finishes.
  void shutdown();
  int64_t waiting() const;

 private:
  std::unique_ptr<Embedder> embedder_;
  int max_waiting_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t next_ticket_ = 0;  // tickets make the turns first come, first served
  uint64_t serving_ = 0;
  int64_t waiting_ = 0;
  bool stopping_ = false;
};

}  // namespace ox::server
