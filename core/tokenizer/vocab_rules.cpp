// Family tables and text-based special-token rules (see vocab_rules.h). The token texts below are
// the ones llama.cpp's loader recognises; GGUF has no field for them.
#include "core/tokenizer/vocab_rules.h"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string>

namespace ox::tok {

namespace {

// name, pre, clean_spaces, ignore_merges, add_bos, escape_whitespaces, no_bos
const PreTypeRule kPreTypeRules[] = {
    {"", PreType::kDefault},
    {"default", PreType::kDefault},
    {"llama3", PreType::kLlama3, true, true, true},
    {"llama-v3", PreType::kLlama3, true, true, true},
    {"llama-bpe", PreType::kLlama3, true, true, true},
    {"falcon3", PreType::kLlama3, true, true, true},
    {"falcon-h1", PreType::kLlama3, true, true, true},
    {"pixtral", PreType::kLlama3, true, true, true},
    {"midm-2.0", PreType::kLlama3, true, true, true},
    {"lfm2", PreType::kLlama3, true, true, true},
    {"dbrx", PreType::kLlama3},
    {"smaug-bpe", PreType::kLlama3},
    {"chatglm-bpe", PreType::kLlama3, true, false, false, false, true},
    {"deepseek-llm", PreType::kDeepseekLlm, false},
    {"deepseek-coder", PreType::kDeepseekCoder, false},
    {"falcon", PreType::kFalcon},
    {"mpt", PreType::kGpt2},
    {"starcoder", PreType::kStarcoder},
    {"gpt-2", PreType::kGpt2},
    {"phi-2", PreType::kGpt2},
    {"jina-es", PreType::kGpt2},
    {"jina-de", PreType::kGpt2},
    {"gigachat", PreType::kGpt2},
    {"jina-v1-en", PreType::kGpt2},
    {"jina-v2-es", PreType::kGpt2},
    {"jina-v2-de", PreType::kGpt2},
    {"jina-v2-code", PreType::kGpt2},
    {"roberta-bpe", PreType::kGpt2},
    {"refact", PreType::kStarcoder},
    {"command-r", PreType::kStarcoder, false},
    {"qwen2", PreType::kQwen2, false},
    {"deepseek-r1-qwen", PreType::kQwen2, false},
    {"qwen35", PreType::kQwen35, false},
    {"stablelm2", PreType::kQwen2},
    {"olmo", PreType::kGpt2},
    {"poro-chat", PreType::kBloom, false},
    {"bloom", PreType::kBloom},
    {"gpt3-finnish", PreType::kBloom},
    {"viking", PreType::kViking, false},
    {"jais", PreType::kGpt2},
    {"smollm", PreType::kStarcoder, false},
    {"codeshell", PreType::kStarcoder},
    {"exaone", PreType::kStarcoder},
    {"minerva-7b", PreType::kStarcoder},
    {"trillion", PreType::kGpt2, false},
    {"grok-2", PreType::kQwen2},
    // Gemma 4: SPM-style BPE over raw UTF-8 with spaces escaped; llama.cpp forces BOS on.
    {"gemma4", PreType::kGemma4, false, false, true, true},
};

bool text_in(std::string_view t, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), t) != list.end();
}

const std::initializer_list<std::string_view> kEotTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
    "<EOT>", "_<EOT>", "[EOT]", "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
    "<end_of_utterance>"};
const std::initializer_list<std::string_view> kFimPreTexts = {
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>",
    "<PRE>", "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>"};
const std::initializer_list<std::string_view> kFimSufTexts = {
    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81hole\xEF\xBD\x9C>",
    "<SUF>", "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>"};
const std::initializer_list<std::string_view> kFimMidTexts = {
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>",
    "<MID>", "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>"};
const std::initializer_list<std::string_view> kFimPadTexts = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"};
const std::initializer_list<std::string_view> kFimRepTexts = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>",
                                                              "<reponame>"};
const std::initializer_list<std::string_view> kEogTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>"};

// Ids whose text maps back to them (a repeated text only counts once, at its last id), ascending.
template <typename F>
void for_each_canonical(const Vocab& v, F&& f) {
  for (int32_t id = 0; id < v.n_vocab(); ++id) {
    const std::string_view t = v.text(id);
    if (v.find(t) == id) f(id, t);
  }
}

void detect_by_text(Vocab* v) {
  const auto pick = [&](int32_t* slot, int32_t id, std::string_view t, std::initializer_list<std::string_view> list) {
    if (*slot < 0 && text_in(t, list)) {
      *slot = id;
      v->attrs[id] |= kAttrControl;
    }
  };
  for_each_canonical(*v, [&](int32_t id, std::string_view t) {
    pick(&v->eot, id, t, kEotTexts);
    pick(&v->eom, id, t, {"<|eom_id|>"});
    pick(&v->fim_pre, id, t, kFimPreTexts);
    pick(&v->fim_suf, id, t, kFimSufTexts);
    pick(&v->fim_mid, id, t, kFimMidTexts);
    pick(&v->fim_pad, id, t, kFimPadTexts);
    pick(&v->fim_rep, id, t, kFimRepTexts);
    pick(&v->fim_sep, id, t, {"<|file_sep|>"});
  });
}

void build_eog(Vocab* v) {
  std::set<int32_t> eog;
  for (int32_t id : {v->fim_pad, v->fim_rep, v->fim_sep}) {
    if (id >= 0) eog.insert(id);
  }
  for_each_canonical(*v, [&](int32_t id, std::string_view t) {
    if (text_in(t, kEogTexts)) {
      eog.insert(id);
      v->attrs[id] |= kAttrControl;
    }
  });
  // gpt-oss: these structure tokens must always render, so they are demoted to user-defined.
  for_each_canonical(*v, [&](int32_t id, std::string_view t) {
    if (text_in(t, {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"})) v->attrs[id] = kAttrUserDefined;
  });
  for (int32_t id : {v->eos, v->eot, v->eom}) {
    if (id >= 0) eog.insert(id);
  }
  // o200k_harmony / solar-open: with <|return|>+<|call|> (or <|calls|>+<|flush|>), <|end|> only
  // ends a message, not the generation.
  bool has_return = false, has_call = false, has_flush = false, has_tool_response = false;
  int32_t end_id = -1, s_id = -1;
  for (int32_t id : eog) {
    const std::string_view t = v->text(id);
    if (t == "<|return|>") has_return = true;
    else if (t == "<|call|>" || t == "<|calls|>") has_call = true;
    else if (t == "<|flush|>") has_flush = true;
    else if (t == "<|end|>") end_id = id;
    else if (t == "<|tool_response>") has_tool_response = true;
    else if (t == "</s>") s_id = id;
  }
  if (end_id >= 0 && ((has_return && has_call) || (has_call && has_flush))) {
    eog.erase(end_id);
    v->attrs[end_id] = kAttrUserDefined;
  }
  // Gemma 4: </s> is ordinary text there, not an end marker.
  if (has_tool_response && s_id >= 0) {
    eog.erase(s_id);
    v->attrs[s_id] = kAttrNormal;
  }
  v->eog_ids.assign(eog.begin(), eog.end());
}

void build_special_cache(Vocab* v) {
  v->special_tokens.clear();
  for (int32_t id = 0; id < v->n_vocab(); ++id) {
    if (v->attrs[id] & (kAttrControl | kAttrUserDefined | kAttrUnknown)) v->special_tokens.push_back(id);
  }
  // Longest text first; ties keep id order so the result does not depend on the sort.
  std::stable_sort(v->special_tokens.begin(), v->special_tokens.end(),
                   [&](int32_t a, int32_t b) { return v->text(a).size() > v->text(b).size(); });
}

bool contains_any(std::string_view s, std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts) {
    if (s.find(p) != std::string_view::npos) return true;
  }
  return false;
}

void set_attr(Vocab* v, std::string_view text, uint32_t attr, bool on) {
  const int32_t id = v->find(text);
  if (id < 0) return;
  v->attrs[id] = on ? (v->attrs[id] | attr) : (v->attrs[id] & ~attr);
}

void apply_strip_attrs(std::string_view general_name, std::string_view arch, Vocab* v) {
  std::string name(general_name);
  for (char& c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (contains_any(v->pre_name, {"jina-v2-de", "jina-v2-es", "jina-v2-code"}) ||
      contains_any(arch, {"nomic-bert-moe", "jina-bert-v3"})) {
    set_attr(v, "<mask>", kAttrLstrip, true);
  } else if (contains_any(name, {"phi-3", "phi3"})) {
    for (int32_t id : v->special_tokens) v->attrs[id] |= kAttrRstrip;
    set_attr(v, "</s>", kAttrRstrip, true);
    for (std::string_view t : {"<unk>", "<s>", "<|endoftext|>"}) set_attr(v, t, kAttrRstrip, false);
  } else if (contains_any(name, {"modern-bert"})) {
    set_attr(v, "[MASK]", kAttrLstrip, true);
  }
}

}  // namespace

const PreTypeRule* find_pre_type_rule(std::string_view pre) {
  for (const PreTypeRule& r : kPreTypeRules) {
    if (pre == r.name) return &r;
  }
  return nullptr;
}

void finish_special_tokens(std::string_view general_name, std::string_view architecture, Vocab* v) {
  detect_by_text(v);
  build_eog(v);
  build_special_cache(v);
  apply_strip_attrs(general_name, architecture, v);
}

}  // namespace ox::tok
