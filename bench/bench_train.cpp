// Native side of `npm run bench:train` (bench/train.mjs): steps per second of the model of issue 30
// (cpp/model.h) trained natively, one thread, with the core as the native CMake preset builds it
// (build/, Release: -O3 -DNDEBUG; no -march=native, like the library the Catch2 suite tests).
//
//   bench_train CONFIG.json|- [--seconds S] [--warmup W] [--chunk K]
//   bench_train CONFIG.json|- --until-induction SCORE [--chunk K] [--max-steps N]
//
// CONFIG is a configuration as `attention-explorer train` reads it (a preset's --print-config).
// The first form trains W seconds [1] of warm-up, then times chunks of K steps [10] (Model::train)
// until at least S seconds [3] have passed, and prints one JSON line:
//   {"impl": "native", "steps_per_second": X, "steps": N, "seconds": ELAPSED, "last_loss": L}
// The second trains from the seed in chunks of K steps [50], reading head_scores() after each, until
// a head of the last layer has an induction (prefix-matching) score above SCORE or N steps [5000]
// have passed; prints {"impl": "native", "reached": bool, "step", "seconds" (training only),
// "layer", "head", "induction"}.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "model.h"

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int usage(const char* message) {
  std::fprintf(stderr,
               "bench_train: %s\nusage: bench_train CONFIG.json|- [--seconds S] [--warmup W] [--chunk K]\n"
               "       bench_train CONFIG.json|- --until-induction SCORE [--chunk K] [--max-steps N]\n",
               message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  double seconds = 3, warmup = 1, until = -1;
  int chunk = 0, max_steps = 5000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--seconds" && has_value)
      seconds = std::atof(argv[++i]);
    else if (a == "--warmup" && has_value)
      warmup = std::atof(argv[++i]);
    else if (a == "--chunk" && has_value)
      chunk = std::atoi(argv[++i]);
    else if (a == "--until-induction" && has_value)
      until = std::atof(argv[++i]);
    else if (a == "--max-steps" && has_value)
      max_steps = std::atoi(argv[++i]);
    else if (path.empty() && (a == "-" || a.rfind("--", 0) != 0))
      path = a;
    else
      return usage(("unknown argument " + a).c_str());
  }
  if (path.empty()) return usage("no configuration given");
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(path);
    if (!in) return usage(("cannot read " + path).c_str());
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  try {
    const attn::TrainConfig config = attn::train_config_from_json(attn::Json::parse(text));
    attn::Model model(config);
    if (until >= 0) {
      if (chunk <= 0) chunk = 50;
      double trained = 0;
      attn::HeadScore best;
      bool reached = false;
      while (!reached && model.step() < max_steps) {
        const double t0 = now_s();
        model.train(std::min(chunk, max_steps - model.step()));
        trained += now_s() - t0;
        best = attn::HeadScore{};
        best.induction = -1;
        for (const attn::HeadScore& s : model.head_scores()) {
          if (s.layer == config.model.layers && s.induction > best.induction) best = s;
        }
        reached = best.induction > until;
      }
      std::printf(
          "{\"impl\":\"native\",\"reached\":%s,\"step\":%d,\"seconds\":%.4f,\"layer\":%d,\"head\":%d,\"induction\":%."
          "6f}\n",
          reached ? "true" : "false", model.step(), trained, best.layer, best.head, best.induction);
      return 0;
    }
    if (chunk <= 0) chunk = 10;
    const double w0 = now_s();
    while (now_s() - w0 < warmup) model.train(chunk);
    int steps = 0;
    double last = 0;
    const double t0 = now_s();
    double elapsed = 0;
    do {
      last = model.train(chunk).back();
      steps += chunk;
      elapsed = now_s() - t0;
    } while (elapsed < seconds);
    std::printf("{\"impl\":\"native\",\"steps_per_second\":%.3f,\"steps\":%d,\"seconds\":%.4f,\"last_loss\":%.6f}\n",
                steps / elapsed, steps, elapsed, last);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_train: %s\n", e.what());
    return 1;
  }
  return 0;
}
