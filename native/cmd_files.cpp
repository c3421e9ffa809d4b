// Commands that need no weights: `inspect` (any GGUF), `tokenize` (vocab-only GGUFs work too)
// and `template` (chat template rendering).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/gguf/describe.h"
#include "core/session/chat_template.h"
#include "native/commands.h"

namespace ox::cli {

Status cmd_inspect(Args& args) {
  OX_ASSIGN_OR_RETURN(std::string path, args.string({"-m", "--model"}, ""));
  std::vector<std::string> rest = args.positionals();
  OX_TRY(args.finish());
  if (path.empty() && rest.size() == 1) {
    path = rest[0];
  } else if (path.empty() || !rest.empty()) {
    return error(ErrorCode::kInvalidArgument, "usage: oxidize inspect MODEL.gguf");
  }
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::open(path));
  std::string text = gguf::describe_gguf(*file);
  // Files with a vocabulary (models, vocab-only GGUFs) render chats: say with which template.
  if (file->find("tokenizer.ggml.model") != nullptr) {
    Result<std::unique_ptr<tok::Tokenizer>> tokenizer = tok::Tokenizer::from_gguf(*file);
    text += "chat template: ";
    text += tokenizer.ok() ? describe_chat_template(model_chat_template(*file, **tokenizer))
                           : "none (the vocabulary does not load: " + tokenizer.status().message() + ")";
    text += "\n";
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return Status::ok();
}

Status cmd_tokenize(Args& args) {
  if (args.has({"--bench"})) return cmd_tokenize_bench(args);
  OX_ASSIGN_OR_RETURN(std::string path, args.string({"-m", "--model"}, ""));
  const bool ids_only = args.flag({"--ids"});
  const bool no_bos = args.flag({"--no-bos"});
  const bool no_parse_special = args.flag({"--no-parse-special"});
  OX_ASSIGN_OR_RETURN(std::string text, prompt_text(args));
  OX_TRY(args.finish());
  if (path.empty()) return error(ErrorCode::kInvalidArgument, "no model given: pass -m MODEL.gguf");
  OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::open(path));
  OX_ASSIGN_OR_RETURN(std::unique_ptr<tok::Tokenizer> tokenizer, tok::Tokenizer::from_gguf(*file));
  OX_ASSIGN_OR_RETURN(std::vector<int32_t> ids, tokenizer->encode(text, !no_bos, !no_parse_special));
  if (ids_only) {
    std::printf("[");
    for (size_t i = 0; i < ids.size(); ++i) std::printf(i == 0 ? "%d" : ", %d", ids[i]);
    std::printf("]\n");
    return Status::ok();
  }
  for (int32_t id : ids) {
    OX_ASSIGN_OR_RETURN(std::string piece, tokenizer->token_to_piece(id, /*render_special=*/true));
    std::printf("%6d -> '%s'\n", id, piece.c_str());
  }
  return Status::ok();
}

Status cmd_template(Args& args) {
  OX_ASSIGN_OR_RETURN(std::string model_path, args.string({"-m", "--model"}, ""));
  OX_ASSIGN_OR_RETURN(std::string template_path, args.string({"--template"}, ""));
  OX_ASSIGN_OR_RETURN(std::string chat_template, chat_template_arg(args));
  OX_ASSIGN_OR_RETURN(std::string messages_path, args.string({"--messages"}, ""));
  const bool add_generation_prompt = args.flag({"--add-generation-prompt"});
  const bool has_bos = args.has({"--bos"}), has_eos = args.has({"--eos"});
  OX_ASSIGN_OR_RETURN(std::string bos, args.string({"--bos"}, ""));
  OX_ASSIGN_OR_RETURN(std::string eos, args.string({"--eos"}, ""));
  OX_TRY(args.finish());
  if (template_path.empty() ? model_path.empty() && chat_template.empty()
                            : !model_path.empty() || !chat_template.empty()) {
    return error(ErrorCode::kInvalidArgument,
                 "give -m MODEL.gguf (its template, or --chat-template NAME|FILE with its BOS/EOS), "
                 "--chat-template NAME|FILE, or --template FILE.jinja");
  }
  if (messages_path.empty()) return error(ErrorCode::kInvalidArgument, "--messages FILE.json is required");
  OX_ASSIGN_OR_RETURN(std::string messages_text, read_text_file(messages_path));
  // ordered_json keeps key order, so tojson prints objects as Python would.
  nlohmann::ordered_json messages = nlohmann::ordered_json::parse(messages_text, nullptr, false);
  if (messages.is_discarded()) {
    return error(ErrorCode::kInvalidArgument, strfmt("%s: not valid JSON", messages_path.c_str()));
  }
  if (messages.is_object() && messages.contains("messages")) messages = messages["messages"];
  if (!messages.is_array()) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("%s: expected a JSON array of messages (or an object with \"messages\")", messages_path.c_str()));
  }

  ChatTemplateInfo info;
  bool add_bos = false;
  if (!template_path.empty()) {
    OX_ASSIGN_OR_RETURN(info.source, read_text_file(template_path));  // rendered as it is, BOS and all
  } else if (!chat_template.empty()) {
    OX_ASSIGN_OR_RETURN(info, override_chat_template(chat_template));
  }
  if (!model_path.empty()) {
    OX_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::open(model_path));
    OX_ASSIGN_OR_RETURN(std::unique_ptr<tok::Tokenizer> tokenizer, tok::Tokenizer::from_gguf(*file));
    if (chat_template.empty()) info = model_chat_template(*file, *tokenizer);
    add_bos = tokenizer->add_bos();
    // Without explicit --bos/--eos, the model's own token texts fill bos_token/eos_token.
    if (!has_bos && tokenizer->bos_id() >= 0) {
      OX_ASSIGN_OR_RETURN(bos, tokenizer->token_to_piece(tokenizer->bos_id(), true));
    }
    if (!has_eos && tokenizer->eos_id() >= 0) {
      OX_ASSIGN_OR_RETURN(eos, tokenizer->token_to_piece(tokenizer->eos_id(), true));
    }
  }
  OX_ASSIGN_OR_RETURN(std::string rendered,
                      render_chat_template(info, messages, add_generation_prompt, bos, eos, add_bos));
  std::fwrite(rendered.data(), 1, rendered.size(), stdout);
  return Status::ok();
}

}  // namespace ox::cli
