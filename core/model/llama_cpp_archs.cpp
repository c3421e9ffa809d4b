// The `general.architecture` names llama.cpp v0.5.0 knows (src/llama-arch.cpp, LLM_ARCH_NAMES), so
// that a model oxidize does not run yet is told apart from a file that is not a model at all.
#include "core/model/arch_registry.h"

namespace ox {

bool known_to_llama_cpp(std::string_view arch) {
  static constexpr std::string_view kNames[] = {
    "clip", "llama", "llama4", "deci", "falcon", "grok", "gpt2", "gptj", "gptneox", "mpt", "baichuan",
    "starcoder", "refact", "bert", "modern-bert", "nomic-bert", "nomic-bert-moe", "neo-bert", "jina-bert-v2",
    "jina-bert-v3", "eurobert", "bloom", "stablelm", "qwen", "qwen2", "qwen2moe", "qwen2vl", "qwen3",
    "qwen3moe", "qwen3next", "qwen3vl", "qwen3vlmoe", "qwen35", "qwen35moe", "qwen4exp", "phi2", "phi3",
    "phimoe", "plamo", "plamo2", "plamo3", "codeshell", "orion", "internlm2", "minicpm", "minicpm3", "gemma",
    "gemma2", "gemma3", "gemma3n", "gemma4", "gemma4-assistant", "gemma-embedding", "starcoder2", "mamba",
    "mamba2", "maple", "jamba", "falcon-h1", "xverse", "command-r", "cohere2", "cohere2moe", "dbrx", "olmo",
    "olmo2", "olmoe", "muse-glimmer", "openelm", "arctic", "deepseek", "deepseek2", "deepseek2-ocr",
    "deepseek32", "deepseek4", "chatglm", "glm4", "glm4moe", "glm-dsa", "bitnet", "t5", "t5encoder", "jais",
    "jais2", "nemotron", "nemotron_h", "nemotron_h_moe", "exaone", "exaone4", "exaone-moe", "rwkv6",
    "rwkv6qwen2", "rwkv7", "arwkv7", "granite", "granitemoe", "granitehybrid", "graniteswitch", "granite_swa",
    "chameleon", "wavtokenizer-dec", "plm", "bailingmoe", "bailingmoe2", "bailingmoe3", "dots1", "dots3note",
    "arcee", "afmoe", "laguna", "ernie4_5", "ernie4_5-moe", "hunyuan-moe", "hunyuan-dense", "hunyuan_vl",
    "hy_v3", "hy_v4", "smollm3", "gpt-oss", "lfm2", "lfm2moe", "dream", "smallthinker", "llada", "llada-moe",
    "seed_oss", "grovemoe", "apertus", "minimax-01", "hrm_text", "minimax-m2", "minimax-m3", "cogvlm", "rnd1",
    "pangu-embedded", "mistral3", "eagle3", "dflash", "mistral4", "paddleocr", "mimo2", "step35", "spark2_5",
    "llama-embed", "maincoder", "kimi-linear", "kimi-k3", "talkie", "mellum", "nanbeige", "qwen3tts",
    "pockettts",
  };
  for (std::string_view n : kNames) {
    if (n == arch) return true;
  }
  return false;
}

bool llama_cpp_name_only(std::string_view arch) {
  // llama_model_mapping (src/llama-model.cpp) has no model for it: "unsupported model architecture".
  return arch == "gptj";
}

std::string_view out_of_scope_reason(std::string_view arch) {
  if (arch == "t5") {
    return "T5's decoder (text generation with an encoder-decoder) is out of scope; its encoder runs for embeddings "
           "from a t5encoder file (convert_hf_to_gguf.py of a T5EncoderModel)";
  }
  return {};
}

}  // namespace ox
