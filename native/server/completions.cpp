// POST /v1/chat/completions and /v1/completions: parse, tokenize (message text never becomes
// control tokens), check the slot's context, queue the job (n choices), then either stream
// server-sent events as text arrives (each chunk names its choice) or answer with every choice whole.
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
  // With a context shift the slot makes room as it fills; without one, a reply that cannot fit is
  // refused now rather than cut short (OpenAI's answer to max_tokens beyond the context).
  if (!ctx.scheduler->context_shift() && r.max_tokens > 0 &&
      out->size() + static_cast<size_t>(r.max_tokens) > static_cast<size_t>(n_ctx)) {
    *e = bad_param("max_tokens", "context_length_exceeded",
                   strfmt("'max_tokens' %lld with a prompt of %zu tokens exceeds a slot's context of %d tokens (at "
                          "most %zu new tokens fit; or start the server with --context-shift)",
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

// What the HTTP side keeps per choice while its text arrives.
struct ChoiceOutput {
  std::shared_ptr<ToolReply> reply;  // tools: the reply parsed into tool_calls as it comes (else null)
  size_t text_offset = 0;            // completions' logprobs.text_offset, streamed
  bool closed = false;               // streaming: its closing chunk was sent
  std::string text;                  // not streaming: the whole reply
  std::vector<TokenLogprob> tokens;  // not streaming: its tokens' logprobs
};

using Writer = std::function<bool(std::string_view)>;

// The chunks of a choice's new text: its text as it is (with its tokens' logprobs when asked for;
// a token whose text is still held back, as a partial stop string, comes with empty text), or
// (tools) the deltas of its parse.
bool write_text(const ChoiceUpdate& u, int index, const ResponseContext& rc, ChoiceOutput& out, bool logprobs,
                const Writer& write) {
  if (out.reply == nullptr && logprobs && !u.logprobs.empty()) {
    return write(sse_event(text_chunk(rc, index, u.text, logprobs_json(rc, u.logprobs, &out.text_offset))));
  }
  if (out.reply == nullptr) return u.text.empty() || write(sse_event(text_chunk(rc, index, u.text)));
  for (const nlohmann::ordered_json& d : out.reply->append(u.text)) {
    if (!write(sse_event(delta_chunk(rc, index, d)))) return false;
  }
  return true;
}

// A finished choice's last deltas (tools) and closing chunk with its finish reason.
bool close_choice(const ChoiceUpdate& u, int index, const ResponseContext& rc, ChoiceOutput& out, const Writer& write) {
  out.closed = true;
  std::string reason = u.finish_reason;
  if (out.reply != nullptr) {
    for (const nlohmann::ordered_json& d : out.reply->finish()) {
      if (!write(sse_event(delta_chunk(rc, index, d)))) return false;
    }
    reason = out.reply->finish_reason(reason);
  }
  return write(sse_event(closing_chunk(rc, index, reason)));
}

void stream(ServerContext& ctx, std::shared_ptr<Job> job, ResponseContext rc, bool include_usage, bool logprobs, int fd,
            std::vector<ChoiceOutput> outputs, httplib::Response& res) {
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  ctx.open_streams.fetch_add(1);
  struct State {
    bool opened = false;
    std::chrono::steady_clock::time_point last_write;
    std::vector<ChoiceOutput> outputs;
  };
  auto st = std::make_shared<State>();
  st->outputs = std::move(outputs);
  res.set_chunked_content_provider(
      "text/event-stream",
      [job, rc, include_usage, logprobs, st, fd](size_t, httplib::DataSink& sink) -> bool {
        const Writer write = [&](std::string_view s) {
          st->last_write = std::chrono::steady_clock::now();
          return sink.write(s.data(), s.size());
        };
        const int n = static_cast<int>(st->outputs.size());
        if (!st->opened) {
          st->opened = true;
          for (int i = 0; i < n; ++i) {
            if (!write(sse_event(opening_chunk(rc, i)))) return false;
          }
          return true;
        }
        if (peer_closed(fd)) return false;  // the releaser cancels the job
        JobUpdate u = job->take(kPoll);
        // A failed write must end the provider: cpp-httplib ignores done() once a write failed and
        // would call it again forever.
        for (int i = 0; i < n; ++i) {
          const ChoiceUpdate& c = u.choices[static_cast<size_t>(i)];
          ChoiceOutput& out = st->outputs[static_cast<size_t>(i)];
          if (!write_text(c, i, rc, out, logprobs, write)) return false;  // client gone
          if (c.done && !out.closed && u.error.empty() && !close_choice(c, i, rc, out, write)) return false;
        }
        if (u.done) {
          const bool ok = !u.error.empty() ? write(sse_event(error_json(job_error(u.error))))
                                           : (!include_usage || write(sse_event(usage_chunk(rc, u.usage)))) &&
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
        job->cancel();  // no-op once done; otherwise its slots are freed at the next step
        ctx.open_streams.fetch_sub(1);
      });
}

// Every choice of a finished job, in OpenAI's shape.
nlohmann::ordered_json answer_choices(const ResponseContext& rc, const JobUpdate& u, std::vector<ChoiceOutput>& outputs,
                                      bool logprobs) {
  Json choices = Json::array();
  for (size_t i = 0; i < outputs.size(); ++i) {
    ChoiceOutput& out = outputs[i];
    const std::string& reason = u.choices[i].finish_reason;
    size_t offset = 0;
    Json lp = logprobs ? logprobs_json(rc, out.tokens, &offset) : Json(nullptr);
    if (out.reply != nullptr) {
      out.reply->append(out.text);
      out.reply->finish();
      choices.push_back(message_choice(static_cast<int>(i), out.reply->message().to_json(), out.reply->finish_reason(reason),
                                       std::move(lp)));
    } else {
      choices.push_back(text_choice(rc, static_cast<int>(i), out.text, reason, std::move(lp)));
    }
  }
  return choices;
}

// One constraint per choice (a constraint has state): make() builds each; an error names `field`.
template <class Make>
bool constraints_for(int n, const char* field, Make make, std::vector<std::shared_ptr<TokenConstraint>>* out, ApiError* e) {
  out->clear();
  for (int i = 0; i < n; ++i) {
    Result<std::shared_ptr<TokenConstraint>> c = make(i);
    if (!c.ok()) {
      *e = bad_param(field, "invalid_value", c.status().message());
      return false;
    }
    out->push_back(std::move(c).value());
  }
  return true;
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
  const int n_slots = ctx.scheduler->n_slots();
  if (r.n_choices > n_slots) {  // each choice takes a slot: more would wait for ever
    return send_error(res, bad_param("n", "invalid_value",
                                     strfmt("'n' is %d but the server runs %d slots (-np %d), one per choice: ask for "
                                            "at most %d, or start the server with more slots",
                                            r.n_choices, n_slots, n_slots, n_slots)));
  }
  GenParams params;
  params.n_choices = r.n_choices;
  std::vector<ChoiceOutput> outputs(static_cast<size_t>(r.n_choices));
  if (r.tools.active()) {
    if (r.logprobs && r.stream) {  // as llama-server: the deltas are parsed, not the tokens' text
      return send_error(res, bad_param("logprobs", "invalid_value", "'logprobs' is not supported with 'tools' and \"stream\": true"));
    }
    for (ChoiceOutput& out : outputs) {  // tools: each reply is parsed into tool_calls as it comes
      out.reply = std::make_shared<ToolReply>(turn.format, r.tools, turn.thinking_forced_open, std::random_device{}());
    }
    params.render_special = true;  // markers such as [TOOL_CALLS] are control tokens
    if (turn.constraint != nullptr) {
      const auto make = [&](int i) -> Result<std::shared_ptr<TokenConstraint>> {
        if (i == 0) return turn.constraint;
        OX_ASSIGN_OR_RETURN(ToolChatTurn again, prepare_tool_chat(*ctx.model, r.messages, r.tools));
        return again.constraint;
      };
      if (!constraints_for(r.n_choices, "tools", make, &params.constraints, &e)) return send_error(res, e);
    }
  }
  if (r.logprobs) params.top_logprobs = r.top_logprobs;
  params.max_tokens = static_cast<int>(r.max_tokens);
  params.n_keep = r.n_keep.value_or(ctx.options.n_keep);
  params.n_discard = r.n_discard;
  params.sampling = to_sampler_params(r);
  params.dry_breakers = dry_breakers_for(ctx.model->tokenizer(), params.sampling);  // as llama-server, per request
  if (r.constraint.kind != OutputConstraint::Kind::kNone) {
    const bool grammar = r.constraint.kind == OutputConstraint::Kind::kGrammar;
    const auto make = [&](int) {
      return grammar ? ctx.model->grammar_constraint(r.constraint.text) : ctx.model->json_schema_constraint(r.constraint.text);
    };
    if (!constraints_for(r.n_choices, grammar ? "grammar" : "response_format", make, &params.constraints, &e)) {
      return send_error(res, e);
    }
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
  if (r.stream) return stream(ctx, std::move(job), std::move(rc), r.include_usage, r.logprobs, fd, std::move(outputs), res);
  for (;;) {
    JobUpdate u = job->take(kPoll);
    for (size_t i = 0; i < outputs.size(); ++i) {
      outputs[i].text += u.choices[i].text;
      for (TokenLogprob& t : u.choices[i].logprobs) outputs[i].tokens.push_back(std::move(t));
    }
    if (!u.done && peer_closed(fd)) {
      job->cancel();  // its slots are freed at the next step; nobody reads this answer
      return send_error(res, job_error("the client closed the connection"));
    }
    if (!u.done) continue;
    if (!u.error.empty()) return send_error(res, job_error(u.error));
    return send_json(res, 200, full_response(rc, answer_choices(rc, u, outputs, r.logprobs), u.usage));
  }
}

}  // namespace ox::server
