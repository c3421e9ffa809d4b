// One request at a time on the server's embedder, first come first served (embedding_queue.h).
#include "native/server/embedding_queue.h"

namespace ox::server {

EmbeddingQueue::EmbeddingQueue(std::unique_ptr<Embedder> embedder, int max_waiting)
    : embedder_(std::move(embedder)), max_waiting_(max_waiting) {}

Result<std::unique_ptr<EmbeddingQueue>> EmbeddingQueue::create(std::shared_ptr<const LoadedModel> model,
                                                               const ServerOptions& o) {
  EmbedderOptions eo;
  eo.n_ctx = o.n_ctx;
  eo.n_threads = o.n_threads;
  eo.pooling = o.pooling;
  if (o.rerank) {
    if (o.pooling != Pooling::kUnspecified && o.pooling != Pooling::kRank) {
      return error(ErrorCode::kInvalidArgument,
                   strfmt("--rerank needs rank pooling, not --pooling %s", pooling_name(o.pooling)));
    }
    eo.pooling = Pooling::kRank;
  }
  OX_ASSIGN_OR_RETURN(std::unique_ptr<Embedder> embedder, Embedder::create(std::move(model), eo));
  return std::make_unique<EmbeddingQueue>(std::move(embedder), o.max_queue);
}

Admission EmbeddingQueue::run(const std::function<void(Embedder&)>& work) {
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) return Admission::kShuttingDown;
  // The request being served is not waiting: max_waiting counts the ones behind it.
  if (serving_ != next_ticket_ && waiting_ >= max_waiting_) return Admission::kQueueFull;
  const uint64_t ticket = next_ticket_++;
  ++waiting_;
  cv_.wait(lock, [&] { return serving_ == ticket; });
  --waiting_;
  const bool stopping = stopping_;
  if (!stopping) {
    lock.unlock();
    work(*embedder_);
    lock.lock();
  }
  ++serving_;
  cv_.notify_all();
  return stopping ? Admission::kShuttingDown : Admission::kQueued;
}

void EmbeddingQueue::shutdown() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
  cv_.notify_all();
}

int64_t EmbeddingQueue::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_;
}

}  // namespace ox::server
