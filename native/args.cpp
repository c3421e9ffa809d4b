// Flag parsing for the CLI.
#include "native/args.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace ox::cli {

Args::Args(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) items_.emplace_back(argv[i]);
  used_.assign(items_.size(), false);
}

int Args::find(std::initializer_list<std::string_view> names) const {
  for (size_t i = 0; i < items_.size(); ++i) {
    if (used_[i]) continue;
    for (std::string_view n : names) {
      if (items_[i] == n) return static_cast<int>(i);
    }
  }
  return -1;
}

bool Args::has(std::initializer_list<std::string_view> names) const { return find(names) >= 0; }

bool Args::flag(std::initializer_list<std::string_view> names) {
  const int i = find(names);
  if (i < 0) return false;
  used_[i] = true;
  return true;
}

Result<std::string> Args::string(std::initializer_list<std::string_view> names, std::string fallback) {
  const int i = find(names);
  if (i < 0) return fallback;
  used_[i] = true;
  if (static_cast<size_t>(i) + 1 >= items_.size()) {
    return error(ErrorCode::kInvalidArgument, strfmt("%s needs a value", items_[i].c_str()));
  }
  used_[i + 1] = true;
  return items_[i + 1];
}

Result<std::vector<std::string>> Args::strings(std::initializer_list<std::string_view> names) {
  std::vector<std::string> out;
  while (has(names)) {
    OX_ASSIGN_OR_RETURN(std::string v, string(names, ""));
    out.push_back(v);
  }
  return out;
}

Result<int64_t> Args::integer(std::initializer_list<std::string_view> names, int64_t fallback, int64_t min,
                              int64_t max) {
  const int i = find(names);
  OX_ASSIGN_OR_RETURN(std::string text, string(names, ""));
  if (i < 0) return fallback;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("%s: '%s' is not an integer in [%lld, %lld]", items_[i].c_str(), text.c_str(),
                        static_cast<long long>(min), static_cast<long long>(max)));
  }
  return v;
}

Result<double> Args::number(std::initializer_list<std::string_view> names, double fallback) {
  const int i = find(names);
  OX_ASSIGN_OR_RETURN(std::string text, string(names, ""));
  if (i < 0) return fallback;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    return error(ErrorCode::kInvalidArgument, strfmt("%s: '%s' is not a number", items_[i].c_str(), text.c_str()));
  }
  return v;
}

std::vector<std::string> Args::positionals() {
  std::vector<std::string> out;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (!used_[i] && (items_[i].empty() || items_[i][0] != '-' || items_[i] == "-")) {
      used_[i] = true;
      out.push_back(items_[i]);
    }
  }
  return out;
}

Status Args::finish() {
  for (size_t i = 0; i < items_.size(); ++i) {
    if (!used_[i]) return error(ErrorCode::kInvalidArgument, strfmt("unknown argument '%s'", items_[i].c_str()));
  }
  return Status::ok();
}

Result<std::string> read_text_file(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return error(ErrorCode::kIo, strfmt("cannot open '%s'", path.c_str()));
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return error(ErrorCode::kIo, strfmt("error reading '%s'", path.c_str()));
  return out;
}

std::string read_stdin() {
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), stdin)) > 0) out.append(buf, n);
  return out;
}

}  // namespace ox::cli
