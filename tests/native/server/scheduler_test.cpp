// The batch loop on a real model (stories260K): a job's n choices share one prompt evaluation and
// each gives the float32 reference's greedy tokens (shared/models/stories260K.greedy.txt); a full
// slot shifts its context as llama-completion --context-shift does (tests/data/context_shift), or
// ends with "length" where llama-completion --no-context-shift stops.
#include "native/server/scheduler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/shared_data.h"

namespace ox::server {
namespace {

std::shared_ptr<const LoadedModel> stories() {
  static auto m = LoadedModel::open(test::shared_path("models/stories260K.gguf"));
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? m.value() : nullptr;
}

// A scheduler whose loop runs on its own thread while the test lives.
class Running {
 public:
  explicit Running(const SchedulerOptions& options) {
    auto s = Scheduler::create(stories(), options, &metrics);
    EXPECT_TRUE(s.ok()) << s.status().message();
    scheduler = std::move(s).value();
    thread_ = std::thread([this] { scheduler->run(); });
  }
  ~Running() {
    scheduler->shutdown();
    thread_.join();
  }
  Metrics metrics;
  std::unique_ptr<Scheduler> scheduler;

 private:
  std::thread thread_;
};

SchedulerOptions slots(int n_slots, int n_ctx_slot, bool context_shift) {
  SchedulerOptions o;
  o.n_slots = n_slots;
  o.n_ctx_slot = n_ctx_slot;
  o.n_batch = 256;
  o.context_shift = context_shift;
  return o;
}

struct Finished {
  std::vector<std::string> texts;    // by choice
  std::vector<std::string> reasons;  // by choice
  JobUsage usage;
  std::string error;
};

// Submits a job and gathers every choice's text until it is done.
Finished run_job(Scheduler& scheduler, std::vector<int32_t> prompt, GenParams params) {
  auto job = std::make_shared<Job>(std::move(prompt), std::move(params));
  Finished f;
  f.texts.resize(static_cast<size_t>(job->n_choices()));
  f.reasons.resize(f.texts.size());
  EXPECT_EQ(scheduler.submit(job), Admission::kQueued);
  for (;;) {
    JobUpdate u = job->take(std::chrono::milliseconds(100));
    for (size_t i = 0; i < u.choices.size(); ++i) {
      f.texts[i] += u.choices[i].text;
      f.reasons[i] = u.choices[i].finish_reason;
    }
    if (u.done) {
      f.usage = u.usage;
      f.error = u.error;
      return f;
    }
  }
}

GenParams greedy(int n_choices, int max_tokens) {
  GenParams p;
  p.n_choices = n_choices;
  p.max_tokens = max_tokens;
  p.sampling.temperature = 0;
  return p;
}

std::vector<int32_t> encode(const std::string& text) {
  auto ids = stories()->tokenizer().encode(text, /*add_special=*/true, /*parse_special=*/true);
  EXPECT_TRUE(ids.ok());
  return ids.value();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \n"));
  s.erase(s.find_last_not_of(" \n") + 1);
  return s;
}

// The first n tokens of the float32 reference's greedy continuation from BOS, as text.
std::string reference_greedy_text(size_t n) {
  std::istringstream lines(read_text(test::shared_path("models/stories260K.greedy.txt")));
  std::string line;
  while (std::getline(lines, line) && (line.empty() || line[0] == '#')) {
  }
  std::istringstream ids(line);
  tok::StreamDecoder decoder(stories()->tokenizer(), /*render_special=*/false);
  std::string text;
  int32_t id = 0;
  for (size_t i = 0; i < n && ids >> id; ++i) text += decoder.push(id).value();
  return text + decoder.flush();
}

TEST(Scheduler, ChoicesShareOnePromptEvaluationAndEachIsTheReferenceGreedyText) {
  if (!test::file_exists(test::shared_path("models/stories260K.gguf"))) GTEST_SKIP() << "no shared stories260K";
  Running r(slots(3, 256, false));
  const Finished f = run_job(*r.scheduler, {1}, greedy(3, 40));  // BOS alone: the reference's start
  ASSERT_EQ(f.error, "");
  const std::string want = reference_greedy_text(40);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(f.texts[i], want) << "choice " << i;
    EXPECT_EQ(f.reasons[i], "length") << "choice " << i;
  }
  EXPECT_EQ(f.usage.n_prompt, 1);
  EXPECT_EQ(f.usage.n_generated, 120);  // every choice's tokens
  EXPECT_EQ(r.metrics.prompt_tokens_total.load(), 1u);  // the prompt was evaluated once, not per choice
  EXPECT_EQ(r.metrics.generations_total.load(), 3u);
}

TEST(Scheduler, ChoiceIDrawsFromSeedPlusI) {
  if (!test::file_exists(test::shared_path("models/stories260K.gguf"))) GTEST_SKIP() << "no shared stories260K";
  Running r(slots(3, 256, false));
  GenParams p = greedy(3, 24);
  p.sampling.temperature = 1.0f;
  p.sampling.seed = 7;
  const Finished three = run_job(*r.scheduler, encode("Once upon a time"), p);
  EXPECT_EQ(run_job(*r.scheduler, encode("Once upon a time"), p).texts, three.texts) << "a fixed seed repeats";
  p.n_choices = 1;
  p.sampling.seed = 9;
  EXPECT_EQ(run_job(*r.scheduler, encode("Once upon a time"), p).texts[0], three.texts[2]);
  EXPECT_FALSE(three.texts[0] == three.texts[1] && three.texts[1] == three.texts[2]) << "independent draws";
}

TEST(Scheduler, AFullSlotShiftsItsContextAsLlamaCompletionDoes) {
  if (!test::file_exists(test::shared_path("models/stories260K.gguf"))) GTEST_SKIP() << "no shared stories260K";
  // llama-completion -p 'Once upon a time' -n 700 -c 256 --temp 0 --context-shift --keep K
  Running r(slots(3, 256, true));
  const std::string prompt = "Once upon a time";
  std::vector<Finished> done(2);
  std::thread keep3([&] {
    GenParams p = greedy(1, 700);
    p.n_keep = 3;
    done[1] = run_job(*r.scheduler, encode(prompt), p);
  });
  done[0] = run_job(*r.scheduler, encode(prompt), greedy(2, 700));  // two choices beside the other job
  keep3.join();
  const std::string want0 = trim(read_text(test::source_path("tests/data/context_shift/stories260K.keep0.txt")));
  const std::string want3 = trim(read_text(test::source_path("tests/data/context_shift/stories260K.keep3.txt")));
  ASSERT_EQ(done[0].error, "");
  EXPECT_EQ(trim(prompt + done[0].texts[0]), want0);
  EXPECT_EQ(trim(prompt + done[0].texts[1]), want0);
  EXPECT_EQ(trim(prompt + done[1].texts[0]), want3);
  EXPECT_GE(r.metrics.context_shifts_total.load(), 9u);  // each of the three 3 times or more
}

TEST(Scheduler, WithoutAContextShiftAFullSlotEndsWithLength) {
  if (!test::file_exists(test::shared_path("models/stories260K.gguf"))) GTEST_SKIP() << "no shared stories260K";
  Running r(slots(1, 256, false));
  GenParams p = greedy(1, -1);
  p.ignore_eos = true;
  const Finished f = run_job(*r.scheduler, encode("Once upon a time"), p);
  EXPECT_EQ(f.reasons[0], "length");
  EXPECT_EQ(f.usage.n_generated, 251);  // as llama-completion --no-context-shift (tests/cli/cli.sh)
  EXPECT_EQ(r.metrics.context_shifts_total.load(), 0u);
}

}  // namespace
}  // namespace ox::server
