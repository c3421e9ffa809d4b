// Flag parsing for the CLI against the option tables.
#include "native/args.h"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ox::cli {

Args::Args(const CommandDef& command, int argc, char** argv, int first) : command_(command) {
  std::vector<std::string> items;
  for (int i = first; i < argc; ++i) items.emplace_back(argv[i]);
  parse(std::move(items));
}

Args::Args(const CommandDef& command, std::vector<std::string> items) : command_(command) { parse(std::move(items)); }

const OptionDef* Args::lookup(std::string_view name) const {
  for (const OptionGroup* g : command_.groups) {
    for (const OptionDef& o : g->options) {
      for (std::string_view n : o.names) {
        if (n == name) return &o;
      }
    }
  }
  return nullptr;
}

void Args::parse(std::vector<std::string> items) {
  auto fail = [&](std::string message) {
    if (parse_status_.is_ok()) parse_status_ = error(ErrorCode::kInvalidArgument, std::move(message));
  };
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& item = items[i];
    if (item == "--") {
      for (size_t k = i + 1; k < items.size(); ++k) positionals_.push_back(items[k]);
      break;
    }
    if (item == "-h" || item == "--help") {
      help_ = true;
      continue;
    }
    if (item.size() < 2 || item[0] != '-') {
      positionals_.push_back(item);
      continue;
    }
    std::string name = item, value;
    bool inline_value = false;
    const size_t eq = item.find('=');
    if (item.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = item.substr(0, eq);
      value = item.substr(eq + 1);
      inline_value = true;
    }
    const OptionDef* o = lookup(name);
    if (o == nullptr) {
      fail(strfmt("unknown argument '%s' (see oxidize %s --help)", name.c_str(), command_.name));
      continue;
    }
    if (o->value == nullptr) {
      if (inline_value) fail(strfmt("%s takes no value", name.c_str()));
    } else if (!inline_value) {
      if (i + 1 >= items.size()) {
        fail(strfmt("%s needs a value (%s)", name.c_str(), o->value));
        continue;
      }
      value = items[++i];
    }
    if (o->warning != nullptr) warnings_.push_back(o->warning);
    given_.push_back(Given{o, name, std::move(value)});
  }
}

const OptionDef* Args::registered(std::initializer_list<std::string_view> names) const {
  const OptionDef* o = lookup(*names.begin());
  if (o == nullptr) {
    // A getter for an option missing from the command's tables is our bug, not the user's.
    std::fprintf(stderr, "oxidize: internal error: %s reads %s, which its option tables lack\n", command_.name,
                 std::string(*names.begin()).c_str());
    std::abort();
  }
  return o;
}

const Args::Given* Args::last(const OptionDef* option) const {
  for (size_t i = given_.size(); i-- > 0;) {
    if (given_[i].option == option) return &given_[i];
  }
  return nullptr;
}

bool Args::has(std::initializer_list<std::string_view> names) const { return last(registered(names)) != nullptr; }

bool Args::flag(std::initializer_list<std::string_view> names) { return has(names); }

Result<std::string> Args::string(std::initializer_list<std::string_view> names, std::string fallback) {
  const Given* g = last(registered(names));
  return g == nullptr ? fallback : g->value;
}

Result<std::vector<std::string>> Args::strings(std::initializer_list<std::string_view> names) {
  const OptionDef* o = registered(names);
  std::vector<std::string> out;
  for (const Given& g : given_) {
    if (g.option == o) out.push_back(g.value);
  }
  return out;
}

Result<int64_t> Args::integer(std::initializer_list<std::string_view> names, int64_t fallback, int64_t min,
                              int64_t max) {
  const Given* g = last(registered(names));
  if (g == nullptr) return fallback;
  const std::string& text = g->value;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("%s: '%s' is not an integer in [%lld, %lld]", g->spelling.c_str(), text.c_str(),
                        static_cast<long long>(min), static_cast<long long>(max)));
  }
  return v;
}

Result<double> Args::number(std::initializer_list<std::string_view> names, double fallback) {
  const Given* g = last(registered(names));
  if (g == nullptr) return fallback;
  const std::string& text = g->value;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    return error(ErrorCode::kInvalidArgument, strfmt("%s: '%s' is not a number", g->spelling.c_str(), text.c_str()));
  }
  return v;
}

std::vector<std::string> Args::positionals() {
  positionals_taken_ = true;
  return positionals_;
}

Status Args::finish() {
  OX_TRY(parse_status_);
  if (!positionals_taken_ && !positionals_.empty()) {
    return error(ErrorCode::kInvalidArgument,
                 strfmt("unexpected argument '%s' (see oxidize %s --help)", positionals_[0].c_str(), command_.name));
  }
  return Status::ok();
}

std::string process_escapes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 >= text.size()) {
      out.push_back(text[i]);
      continue;
    }
    const char c = text[++i];
    switch (c) {
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'a': out.push_back('\a'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'v': out.push_back('\v'); break;
      case '\\': case '\'': case '"': case '?': out.push_back(c); break;
      case 'x':
        if (i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
          out.push_back(static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2])));
          i += 2;
          break;
        }
        [[fallthrough]];
      default:  // not an escape llama.cpp knows: keep both characters
        out.push_back('\\');
        out.push_back(c);
    }
  }
  return out;
}

Result<std::string> read_text_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return error(ErrorCode::kIo, strfmt("cannot read '%s': it is a directory", path.c_str()));
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return error(ErrorCode::kIo, strfmt("cannot open '%s': %s", path.c_str(), std::strerror(errno)));
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  const int err = std::ferror(f) != 0 ? errno : 0;
  std::fclose(f);
  if (err != 0) return error(ErrorCode::kIo, strfmt("error reading '%s': %s", path.c_str(), std::strerror(err)));
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
