// OpenAI error objects and JSON text.
#include "native/server/api_error.h"

namespace ox::server {

ApiError bad_param(std::string param, std::string code, std::string message) {
  ApiError e;
  e.param = std::move(param);
  e.code = std::move(code);
  e.message = std::move(message);
  return e;
}

nlohmann::ordered_json error_json(const ApiError& e) {
  nlohmann::ordered_json inner = {{"message", e.message}, {"type", e.type}};
  inner["param"] = e.param.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(e.param);
  inner["code"] = e.code.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(e.code);
  return {{"error", inner}};
}

std::string json_text(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace ox::server
