// Who may call the server: the API key (`Authorization: Bearer KEY`, compared in constant time)
// and the CORS origins given on the command line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ox::server {

// True if `authorization` is "Bearer KEY" for this key. The time taken depends only on the lengths
// of the header and the key, never on where they first differ.
bool bearer_matches(std::string_view authorization, std::string_view key);

// The value for Access-Control-Allow-Origin if `origin` (the request's Origin header) is allowed:
// listed, or "*" listed. Empty: no CORS headers.
std::string allowed_origin(const std::vector<std::string>& origins, std::string_view origin);

// Reads an API key file: the first line, trailing whitespace removed; empty if unreadable.
std::string read_key_file(const std::string& path, std::string* error);

}  // namespace ox::server
