// Where tests find ../shared (models, vocab vectors, templates): $OXIDIZE_SHARED, else the
// folder `shared` beside the repository root; and the repository's own test data (tests/data).
#pragma once

#include <string>
#include <vector>

namespace ox::test {

// Absolute path of `relative` inside the shared data folder ("models/stories260K.gguf").
std::string shared_path(const std::string& relative);

// Absolute path of `relative` inside this repository ("tests/data/perplexity/story.txt").
std::string source_path(const std::string& relative);

// True if the file exists (tests of optional data GTEST_SKIP with a message when it does not).
bool file_exists(const std::string& path);

// Whole file as bytes; empty vector and a gtest failure if it cannot be read.
std::vector<uint8_t> read_file_bytes(const std::string& path);

}  // namespace ox::test
