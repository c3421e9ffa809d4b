// run_server: bind, load the model while /health answers 503, start the batch loop, print the URL,
// then wait for SIGINT/SIGTERM and shut down in order: the scheduler fails every job (streams end
// with an error event), the streams drain, the listener stops.
#include "native/server/server.h"

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "kernels/kernels.h"
#include "native/server/context.h"
#include "native/server/routes.h"

namespace ox::server {
namespace {

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// SIGINT and SIGTERM are blocked in every thread (threads inherit the mask) and taken by sigwait in
// the main thread, so no handler runs in the middle of a forward pass or a lock.
class BlockedSignals {
 public:
  BlockedSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~BlockedSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  int wait() {
    int sig = 0;
    sigwait(&set_, &sig);
    return sig;
  }

 private:
  sigset_t set_, old_;
};

struct Loaded {
  std::shared_ptr<const LoadedModel> model;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<EmbeddingQueue> embeddings;  // instead of the scheduler with --embeddings / --rerank
};

Result<Loaded> load(const ServerOptions& o, Metrics* metrics) {
  Loaded out;
  OX_ASSIGN_OR_RETURN(out.model, LoadedModel::open(o.model_path));
  if (!o.chat_template.empty()) {
    OX_ASSIGN_OR_RETURN(out.model, out.model->with_chat_template(o.chat_template));
  }
  if (o.embeddings || o.rerank) {
    OX_ASSIGN_OR_RETURN(out.embeddings, EmbeddingQueue::create(out.model, o));
    return out;
  }
  const int n_ctx_train = out.model->hparams().n_ctx_train;
  const int n_ctx = o.n_ctx > 0 ? o.n_ctx : std::min(n_ctx_train, SessionOptions::kDefaultMaxContext);
  SchedulerOptions so;
  so.n_slots = o.n_slots;
  so.n_ctx_slot = n_ctx / o.n_slots;  // llama-server's split: each slot gets c / np
  so.n_batch = std::min(o.n_batch, std::max(so.n_ctx_slot, o.n_slots));
  so.n_threads = o.n_threads;
  so.max_queue = o.max_queue;
  so.cache_type_k = o.cache_type_k;
  so.cache_type_v = o.cache_type_v;
  so.swa_full = o.swa_full;
  // As llama-server: a context that cannot shift (learned absolute positions) disables it.
  so.context_shift = o.context_shift && out.model->model().can_shift();
  if (o.context_shift && !so.context_shift) {
    std::fprintf(stderr, "oxidize serve: warning: this model's positions cannot be shifted: --context-shift is off\n");
  }
  if (so.n_ctx_slot < 2) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("-c %d split over %d slots leaves %d positions each; raise -c or lower -np", n_ctx, o.n_slots,
                        so.n_ctx_slot));
  }
  OX_ASSIGN_OR_RETURN(out.scheduler, Scheduler::create(out.model, so, metrics));
  return out;
}

}  // namespace

Status run_server(const ServerOptions& options) {
  BlockedSignals signals;
  ::signal(SIGPIPE, SIG_IGN);  // a client that went away is a failed write, not a dead server
  ServerContext ctx;
  ctx.options = options;
  ctx.model_name = base_name(options.model_path);
  httplib::Server http;
  install_routes(http, ctx);
  http.set_payload_max_length(options.max_body);
  http.set_read_timeout(options.timeout_s, 0);
  http.set_write_timeout(options.timeout_s, 0);
  // An idle keep-alive connection holds a worker, and stop() waits for it: keep that wait short.
  http.set_keep_alive_timeout(2);
  // A worker per connection: every slot's stream, every queued request, and room for /health,
  // /metrics and requests refused with 503.
  const size_t n_workers = static_cast<size_t>(options.n_slots + options.max_queue + 8);
  http.new_task_queue = [n_workers] { return new httplib::ThreadPool(n_workers); };
  // cpp-httplib's default also sets SO_REUSEPORT, which lets a second server (any process of the
  // same user) bind the same port and take half the connections: only SO_REUSEADDR here.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  int port = options.port;
  if (port == 0) {
    port = http.bind_to_any_port(options.host);
  } else if (!http.bind_to_port(options.host, port)) {
    port = -1;
  }
  if (port < 0) {
    return error(ErrorCode::kIo, strfmt("cannot listen on %s:%d (address in use, or not an address of this machine)",
                                        options.host.c_str(), options.port));
  }
  std::atomic<bool> listener_done{false};
  std::thread listener([&http, &listener_done] {
    http.listen_after_bind();
    listener_done.store(true);
  });
  auto stop_listener = [&] {
    // stop() does nothing before the accept loop runs: a load that fails at once (a model that
    // cannot embed) would otherwise leave the listener running and this join waiting for ever.
    while (!http.is_running() && !listener_done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    http.stop();
    listener.join();
  };
  Result<Loaded> loaded = load(options, &ctx.metrics);
  if (!loaded.ok()) {
    stop_listener();
    return loaded.status();
  }
  ctx.model = loaded.value().model;
  ctx.scheduler = std::move(loaded.value().scheduler);
  ctx.embeddings = std::move(loaded.value().embeddings);
  ctx.ready.store(true, std::memory_order_release);
  std::thread loop([&ctx] {
    if (ctx.scheduler) ctx.scheduler->run();
  });
  const bool v6 = options.host.find(':') != std::string::npos;
  if (ctx.embeddings) {
    const Embedder& em = ctx.embeddings->embedder();
    std::printf("oxidize serve: listening on http://%s%s%s:%d (model %s, %s, pooling %s, %d tokens per pass, %d threads, "
                "kernels %s)\n", v6 ? "[" : "", options.host.c_str(), v6 ? "]" : "", port, ctx.model_name.c_str(),
                em.pooling() == Pooling::kRank ? "reranking" : "embeddings", pooling_name(em.pooling()), em.n_ctx(),
                options.n_threads, kernels::best_kernels().isa);
  } else {
    std::printf("oxidize serve: listening on http://%s%s%s:%d (model %s, %d slots of %d tokens, %d threads, kernels %s)\n",
              v6 ? "[" : "", options.host.c_str(), v6 ? "]" : "", port, ctx.model_name.c_str(),
                ctx.scheduler->n_slots(), ctx.scheduler->n_ctx_slot(), options.n_threads, kernels::best_kernels().isa);
  }
  std::fflush(stdout);

  const int sig = signals.wait();
  std::fprintf(stderr, "oxidize serve: %s: shutting down\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
  // cpp-httplib's stop() waits for every connection's worker; one stuck in a slow client's read
  // could hold it for the whole --timeout. Nothing is left to save by then, so the process ends.
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds(10));
    std::fprintf(stderr, "oxidize serve: connections still open 10 s after the signal; exiting\n");
    std::_Exit(0);
  }).detach();
  if (ctx.scheduler) ctx.scheduler->shutdown();
  if (ctx.embeddings) ctx.embeddings->shutdown();
  loop.join();
  // Streams write their error event and end; a stuck client cannot hold the exit past the deadline.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (ctx.open_streams.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop_listener();
  return Status::ok();
}

}  // namespace ox::server
