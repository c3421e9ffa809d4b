// OpenAI's error object ({"error": {"message", "type", "param", "code"}}) with its HTTP status, and
// the one way the server turns JSON into text (invalid UTF-8 from the model is replaced, never fatal).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace ox::server {

struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string code;   // e.g. "invalid_type", "unknown_parameter", "invalid_api_key"
  std::string param;  // the request field at fault, when there is one
};

ApiError bad_param(std::string param, std::string code, std::string message);

nlohmann::ordered_json error_json(const ApiError& e);
// dump() with invalid UTF-8 replaced by U+FFFD (nlohmann's strict default would abort without
// exceptions).
std::string json_text(const nlohmann::ordered_json& j);

}  // namespace ox::server
