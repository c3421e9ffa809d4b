// What every route shares: the options, the model and scheduler once loaded, the metrics.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "core/session/session.h"
#include "native/server/embedding_queue.h"
#include "native/server/metrics.h"
#include "native/server/scheduler.h"
#include "native/server/server.h"

namespace ox::server {

struct ServerContext {
  ServerOptions options;
  std::atomic<bool> ready{false};  // model and scheduler are set (release) before this turns true
  std::shared_ptr<const LoadedModel> model;
  std::unique_ptr<Scheduler> scheduler;  // null when started with --embeddings / --rerank
  std::unique_ptr<EmbeddingQueue> embeddings;  // set only then (embedding_queue.h)
  std::string model_name;  // what /v1/models lists and responses name
  Metrics metrics;
  std::atomic<int> open_streams{0};  // event streams still writing (shutdown waits for them)
};

}  // namespace ox::server
