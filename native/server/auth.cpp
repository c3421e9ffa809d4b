// API key check and CORS origins.
#include "native/server/auth.h"

#include <cstdio>

namespace ox::server {

bool bearer_matches(std::string_view authorization, std::string_view key) {
  constexpr std::string_view kScheme = "Bearer ";
  if (key.empty() || authorization.size() < kScheme.size()) return false;
  unsigned diff = 0;
  for (size_t i = 0; i < kScheme.size(); ++i) diff |= static_cast<unsigned char>(authorization[i] ^ kScheme[i]);
  const std::string_view given = authorization.substr(kScheme.size());
  diff |= given.size() != key.size() ? 1u : 0u;
  // Walk the whole key whatever the given token's length, so neither the position of the first
  // difference nor a length mismatch shortens the loop.
  for (size_t i = 0; i < key.size(); ++i) {
    const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    diff |= g ^ static_cast<unsigned char>(key[i]);
  }
  return diff == 0;
}

std::string allowed_origin(const std::vector<std::string>& origins, std::string_view origin) {
  for (const std::string& o : origins) {
    if (o == "*") return "*";
    if (!origin.empty() && o == origin) return o;
  }
  return {};
}

std::string read_key_file(const std::string& path, std::string* error) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    *error = "cannot open API key file " + path;
    return {};
  }
  std::string key;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && key.size() < 4096) key.append(buf, n);
  std::fclose(f);
  const size_t eol = key.find_first_of("\r\n");
  if (eol != std::string::npos) key.resize(eol);
  while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
  if (key.empty()) *error = "the API key file " + path + " holds no key on its first line";
  return key;
}

}  // namespace ox::server
