// libFuzzer target: arbitrary bytes -> Session::load_state on a stories260K session (n_ctx 64, f16
// cache) that holds a known state. A refused input must leave the session exactly as it was (its
// saved state unchanged, byte for byte); an accepted one must save back to the same bytes (but the
// informative n_ctx field) and evaluate one more token.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "core/session/session.h"
#include "core/session/state_file.h"
#include "tests/fuzz/fuzz_support.h"

namespace ox {
namespace {

struct Fixture {
  std::shared_ptr<const LoadedModel> model;
  std::unique_ptr<Session> session;
  std::vector<uint8_t> baseline;  // the state every input is offered to
};

Fixture& fixture() {
  static Fixture f = [] {
    Fixture out;
    const std::string path = test::shared_path("models/stories260K.gguf");
    Result<std::shared_ptr<const LoadedModel>> model = LoadedModel::open(path);
    if (!model.ok()) {
      std::fprintf(stderr, "fuzz: %s (set OXIDIZE_SHARED to the shared data folder)\n", model.status().message().c_str());
      std::exit(1);
    }
    out.model = model.value();
    SessionOptions options;
    options.n_ctx = 64;
    Result<std::unique_ptr<Session>> session = Session::create(out.model, options);
    OX_CHECK(session.ok());
    out.session = std::move(session).value();
    const int32_t tokens[] = {1, 403, 385};
    OX_CHECK(out.session->eval(tokens).is_ok());
    Result<std::vector<uint8_t>> state = out.session->save_state();
    OX_CHECK(state.ok());
    out.baseline = state.value();
    return out;
  }();
  return f;
}

}  // namespace
}  // namespace ox

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ox;
  Fixture& f = fixture();
  Session& s = *f.session;
  OX_CHECK(s.load_state(f.baseline).is_ok());
  // An exact-size heap copy, so ASan sees a read past the end.
  std::unique_ptr<uint8_t[]> copy(new uint8_t[size == 0 ? 1 : size]);
  if (size > 0) std::memcpy(copy.get(), data, size);
  const std::span<const uint8_t> input(copy.get(), size);
  const Status status = s.load_state(input);
  Result<std::vector<uint8_t>> saved = s.save_state();
  OX_CHECK(saved.ok());
  if (!status.is_ok()) {
    OX_CHECK(!status.message().empty());
    OX_CHECK(saved.value() == f.baseline);  // refused: nothing changed
    return 0;
  }
  OX_CHECK(s.n_past() <= s.n_ctx());
  for (int32_t id : s.tokens()) OX_CHECK(id >= 0 && id < f.model->hparams().n_vocab);
  std::vector<uint8_t> expected(input.begin(), input.end());
  const uint32_t n_ctx = static_cast<uint32_t>(s.n_ctx());
  std::memcpy(expected.data() + 24, &n_ctx, 4);  // the header's n_ctx: the saving session's
  OX_CHECK(saved.value() == expected);
  if (s.n_past() < s.n_ctx()) {
    const int32_t one[1] = {0};
    OX_CHECK(s.eval(one).is_ok());
    OX_CHECK(s.logits().size() == static_cast<size_t>(f.model->hparams().n_vocab));
  }
  return 0;
}
