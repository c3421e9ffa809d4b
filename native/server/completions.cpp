// POST /v1/chat/completions and /v1/completions: parse, tokenize (message text never becomes
// control tokens), check the slot's context, queue the job, then either stream server-sent events
// as text arrives or answer with the whole completion.
#include <chrono>
#include <functional>
#include <random>

#include "core/session/generation.h"
#include "native/server/connection.h"
#include "native/server/logprobs.h"
#include "native/server/responses.h"
#include "native/server/routes.h"
#include "native/server/sampling_params.h"

namespace ox::server {
namespace {

using Json = nlohmann::ordered_json;
constexpr auto kPoll = std::chrono::milliseconds(100);
constexpr auto kKeepAliveEvery = std::chrono::seconds(2);

// The field a tool-chat error is about: its message starts with the field's name.
std::string tool_chat_field(const std::string& message) {
  for (const char* f : {"tool_choice", "tools"}) {
    if (message.rfind(f, 0) == 0) return f;
  }
  return "messages";
}

// The prompt's tokens (chat: with the request's tools, and the tool-call constraint in *turn), or
// a 400 naming the field.
bool prompt_tokens(const ServerContext& ctx, const CompletionRequest& r, std::vector<int32_t>* out, ToolChatTurn* turn,
                   ApiError* e) {
  const char* field = r.endpoint == Endpoint::kChat ? "messages" : "prompt";
  Result<std::vector<int32_t>> ids = std::vector<int32_t>{};
  if (r.endpoint == Endpoint::kChat) {
    Result<ToolChatTurn> t = prepare_tool_chat(*ctx.model, r.messages, r.tools);
    if (!t.ok()) {
      const std::string f = tool_chat_field(t.status().message());
      *e = bad_param(f, "invalid_value", strfmt("'%s': %s", f.c_str(), t.status().message().c_str()));
      return false;
    }
    *turn = std::move(t).value();
    ids = std::move(turn->prompt);
  } else if (r.has_prompt_ids) {
    ids = r.prompt_ids;
  } else {
    // A raw prompt as llama-server and `oxidize run -p` read it: BOS as the vocabulary wants,
    // special-token texts parsed.
    ids = ctx.model->tokenizer().encode(r.prompt_text, /*add_special=*/true, /*parse_special=*/true);
  }
  if (!ids.ok()) {
    *e = bad_param(field, "invalid_value", strfmt("'%s': %s", field, ids.status().message().c_str()));
    return false;
  }
  *out = std::move(ids).value();
  const int n_vocab = ctx.model->hparams().n_vocab;
  for (size_t i = 0; i < out->size(); ++i) {
    if ((*out)[i] < 0 || (*out)[i] >= n_vocab) {
      *e = bad_param(field, "invalid_value", strfmt("'%s': token %d at index %zu is outside the vocabulary (%d tokens)",
                                                    field, (*out)[i], i, n_vocab));
      return false;
    }
  }
  if (out->empty()) {
    *e = bad_param(field, "invalid_value", strfmt("'%s': the prompt is empty and the vocabulary adds no BOS token", field));
    return false;
  }
  const int n_ctx = ctx.scheduler->n_ctx_slot();
  if (out->size() >= static_cast<size_t>(n_ctx)) {
    *e = bad_param(field, "context_length_exceeded",
                   strfmt("'%s': the prompt has %zu tokens but a slot's context holds %d (and one more is needed "
                          "to generate): shorten it, or start the server with a larger -c or fewer slots (-np)",
                          field, out->size(), n_ctx));
    return false;
  }
  if (r.max_tokens > 0 && out->size() + static_cast<size_t>(r.max_tokens) > static_cast<size_t>(n_ctx)) {
    *e = bad_param("max_tokens", "context_length_exceeded",
                   strfmt("'max_tokens' %lld with a prompt of %zu tokens exceeds a slot's context of %d tokens (at "
                          "most %zu new tokens fit)",
                          static_cast<long long>(r.max_tokens), out->size(), n_ctx, n_ctx - out->size()));
    return false;
  }
  return true;
}

ApiError job_error(const std::string& message) {
  ApiError e;
  e.status = 503;
  e.type = "server_error";
  e.code = "unavailable";
  e.message = message;
  return e;
}

// The logprobs of a chunk's or an answer's tokens in the endpoint's shape; *offset: the
// completions' text_offset so far.
Json logprobs_json(const ResponseContext& rc, const std::vector<TokenLogprob>& tokens, size_t* offset) {
  return rc.endpoint == Endpoint::kChat ? chat_logprobs(tokens) : completion_logprobs(tokens, offset);
}

// The chunks of a reply's new text: its text as it is (with its tokens' logprobs when asked for;
// a token whose text is still held back, as a partial stop string, comes with empty text), or
// (tools) the deltas of its parse.
bool write_text(const JobUpdate& u, const ResponseContext& rc, ToolReply* reply, bool logprobs, size_t* offset,
                const std::function<bool(std::string_view)>& write) {
  const std::string& text = u.text;
  if (reply == nullptr && logprobs && !u.logprobs.empty()) {
    return write(sse_event(text_chunk(rc, text, logprobs_json(rc, u.logprobs, offset))));
  }
  if (reply == nullptr) return text.empty() || write(sse_event(text_chunk(rc, text)));
  for (const nlohmann::ordered_json& d : reply->append(text)) {
    if (!write(sse_event(delta_chunk(rc, d)))) return false;
  }
  return true;
}

void stream(ServerContext& ctx, std::shared_ptr<Job> job, ResponseContext rc, bool include_usage, bool logprobs, int fd,
            std::shared_ptr<ToolReply> reply, httplib::Response& res) {
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  ctx.open_streams.fetch_add(1);
  struct State {
    bool opened = false;
    std::chrono::steady_clock::time_point last_write;
    size_t text_offset = 0;  // completions' logprobs.text_offset
  };
  auto st = std::make_shared<State>();
  res.set_chunked_content_provider(
      "text/event-stream",
      [job, rc, include_usage, logprobs, st, fd, reply](size_t, httplib::DataSink& sink) -> bool {
        const std::function<bool(std::string_view)> write = [&](std::string_view s) {
          st->last_write = std::chrono::steady_clock::now();
          return sink.write(s.data(), s.size());
        };
        if (!st->opened) {
          st->opened = true;
          return write(sse_event(opening_chunk(rc)));
        }
        if (peer_closed(fd)) return false;  // the releaser cancels the job
        JobUpdate u = job->take(kPoll);
        if (!write_text(u, rc, reply.get(), logprobs, &st->text_offset, write)) return false;  // client gone
        if (u.done) {
          std::string reason = u.finish_reason;
          if (reply != nullptr && u.error.empty()) {
            for (const nlohmann::ordered_json& d : reply->finish()) {
              if (!write(sse_event(delta_chunk(rc, d)))) return false;
            }
            reason = reply->finish_reason(reason);
          }
          // A failed write must end the provider: cpp-httplib ignores done() once a write failed
          // and would call it again forever.
          const bool ok = !u.error.empty() ? write(sse_event(error_json(job_error(u.error))))
                                           : write(sse_event(closing_chunk(rc, reason))) &&
                                                 (!include_usage || write(sse_event(usage_chunk(rc, u.usage)))) &&
                                                 write(kSseDone);
          if (!ok) return false;
          sink.done();
          return true;
        }
        // While queued or between tokens, a comment now and then finds a client that went away.
        if (std::chrono::steady_clock::now() - st->last_write > kKeepAliveEvery) return write(kSseKeepAlive);
        return true;
      },
      [job, &ctx](bool) {
        job->cancel();  // no-op once done; otherwise the slot is freed at the next step
        ctx.open_streams.fetch_sub(1);
      });
}

}  // namespace

void handle_completion(ServerContext& ctx, Endpoint endpoint, const httplib::Request& req, httplib::Response& res) {
  CompletionRequest r;
  ApiError e;
  std::vector<int32_t> prompt;
  ToolChatTurn turn;
  if (!parse_completion_request(req.body, endpoint, &r, &e) || !prompt_tokens(ctx, r, &prompt, &turn, &e)) {
    return send_error(res, e);
  }
  GenParams params;
  std::shared_ptr<ToolReply> reply;  // tools: the reply is parsed into tool_calls as it comes
  if (r.tools.active()) {
    reply = std::make_shared<ToolReply>(turn.format, r.tools, turn.thinking_forced_open, std::random_device{}());
    params.constraint = turn.constraint;
    params.render_special = true;  // markers such as [TOOL_CALLS] are control tokens
    if (r.logprobs && r.stream) {  // as llama-server: the deltas are parsed, not the tokens' text
      return send_error(res, bad_param("logprobs", "invalid_value", "'logprobs' is not supported with 'tools' and \"stream\": true"));
    }
  }
  if (r.logprobs) params.top_logprobs = r.top_logprobs;
  params.max_tokens = static_cast<int>(r.max_tokens);
  params.sampling = to_sampler_params(r);
  params.dry_breakers = dry_breakers_for(ctx.model->tokenizer(), params.sampling);  // as llama-server, per request
  if (r.constraint.kind != OutputConstraint::Kind::kNone) {
    const bool grammar = r.constraint.kind == OutputConstraint::Kind::kGrammar;
    Result<std::shared_ptr<TokenConstraint>> c =
        grammar ? ctx.model->grammar_constraint(r.constraint.text) : ctx.model->json_schema_constraint(r.constraint.text);
    if (!c.ok()) {
      return send_error(res, bad_param(grammar ? "grammar" : "response_format", "invalid_value", c.status().message()));
    }
    params.constraint = std::move(c).value();
  }
  params.stop = r.stop;
  params.ignore_eos = r.ignore_eos;
  auto job = std::make_shared<Job>(std::move(prompt), std::move(params));
  switch (ctx.scheduler->submit(job)) {
    case Admission::kQueued:
      break;
    case Admission::kQueueFull: {
      ApiError busy = job_error(strfmt("every slot is busy and %d requests are waiting; retry later",
                                       ctx.options.max_queue));
      busy.code = "server_busy";
      res.set_header("Retry-After", "1");
      return send_error(res, busy);
    }
    case Admission::kShuttingDown:
      return send_error(res, job_error("the server is shutting down"));
  }
  ResponseContext rc = new_response_context(endpoint, ctx.model_name);
  // The client's socket, polled for a hang-up while the job waits or runs (-1: not found; then a
  // streaming client is noticed by a failed write, a non-streaming one not at all).
  const int fd = request_socket(req);
  if (r.stream) return stream(ctx, std::move(job), std::move(rc), r.include_usage, r.logprobs, fd, std::move(reply), res);
  std::string text;
  std::vector<TokenLogprob> tokens;
  for (;;) {
    JobUpdate u = job->take(kPoll);
    text += u.text;
    for (TokenLogprob& t : u.logprobs) tokens.push_back(std::move(t));
    if (!u.done && peer_closed(fd)) {
      job->cancel();  // its slot is freed at the next step; nobody reads this answer
      return send_error(res, job_error("the client closed the connection"));
    }
    if (!u.done) continue;
    if (!u.error.empty()) return send_error(res, job_error(u.error));
    size_t offset = 0;
    const Json lp = r.logprobs ? logprobs_json(rc, tokens, &offset) : Json(nullptr);
    if (reply != nullptr) {
      reply->append(text);
      reply->finish();
      return send_json(res, 200, full_message_response(rc, reply->message().to_json(), reply->finish_reason(u.finish_reason),
                                                       u.usage, lp));
    }
    return send_json(res, 200, full_response(rc, text, u.finish_reason, u.usage, lp));
  }
}

}  // namespace ox::server
