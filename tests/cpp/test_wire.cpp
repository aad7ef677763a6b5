// The wire table (cpp/wire.h) natively: plain C++ since the embind export moved to
// wire_embind.h, so its checks and its round trip are tested here as well as through JS.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "../../cpp/wire.h"

using attn::InputError;
namespace wire = attn::wire;

namespace {
/// The place and message of what `body` throws, or "no error".
template <class Body>
std::string thrown(Body&& body) {
  try {
    body();
  } catch (const InputError& e) {
    return e.place().field + " " + std::to_string(e.place().row) + ": " + e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("wire: every slot and option has its own name, and JSON keys as problem JSON spells them", "[wire]") {
  std::set<std::string> slots, options;
  for (const wire::Slot& slot : wire::kSlots) {
    CAPTURE(slot.name);
    CHECK(slots.insert(slot.name).second);
    // An input's key is its name; options that are matrices or lists travel as slots too, under
    // their option's key (options.rope.sin, options.sink_logit).
    const std::string key = slot.json.key;
    CHECK((key == slot.name || key.rfind("options.", 0) == 0));
  }
  for (const wire::Option& option : wire::kOptions) {
    CAPTURE(option.name);
    CHECK(options.insert(option.name).second);
    REQUIRE(option.json.key != nullptr);
    CHECK(std::string(option.json.key).rfind("options.", 0) == 0);
  }
  CHECK(slots.count("W_G") == 1);
  CHECK(options.count("causal") == 1);
}

TEST_CASE("wire: a number outside its option's range is refused with the option's key and entry", "[wire]") {
  const wire::Json heads = wire::keyed(wire::kHeads, "options.heads");
  CHECK(thrown([&] { wire::check_number(heads, 0); }) ==
        "options.heads 0: options.heads must be a positive integer, got number 0");
  CHECK(thrown([&] { wire::check_number(heads, 2.5, 3); }) ==
        "options.heads 3: options.heads must be a positive integer: entry 3 is number 2.5");
  CHECK(thrown([&] { wire::check_number(heads, 5000); }) == "options.heads 0: options.heads is 5000: at most 4096");
  CHECK(thrown([&] { wire::check_number(heads, 4); }) == "no error");
}

TEST_CASE("wire: a matrix where a list belongs is refused naming the input", "[wire]") {
  CHECK(thrown([] { wire::as_bias(attn::Matrix::Ones(2, 2), "b_Q"); }) ==
        "b_Q 0: b_Q must be a list of numbers, got a 2x2 matrix");
  CHECK(wire::as_bias(attn::Matrix::Constant(1, 3, 2.0), "b_Q").sum() == 6.0);
}
