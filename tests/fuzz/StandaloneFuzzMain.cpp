// A driver for LLVMFuzzerTestOneInput where libFuzzer is not available (GCC builds, CI): the
// same command line subset as libFuzzer, so the target runs the same way under both.
//
//   spl_fuzz_frontend [-runs=N] [-seed=S] [-max_total_time=SECONDS] [-max_len=BYTES] [-dict=FILE] CORPUS...
//
// Each CORPUS argument is a file or a folder of inputs. Every input runs once as it is, then
// N mutants run, each made from a corpus input (chosen by a seeded generator) by one to four
// mutations: byte flips, deletions, duplications of a slice, insertions of tokens from the
// dictionary (tests/fuzz/spl.dict, shared with fuzz_splc.py and libFuzzer), splices with another
// input, truncation. Mutant k of seed S is the same on every
// machine, and `-only=K` reruns just that one. A crash (the target aborts on a broken
// invariant) writes the input to `crash-input.spl` before the process dies, so it can be
// replayed with `spl_fuzz_frontend crash-input.spl` or `splc crash-input.spl --emit=ll`.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

/// xorshift64*: small, seeded, the same everywhere.
struct Random {
  uint64_t state;
  explicit Random(uint64_t seed) : state(seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull) {}
  uint64_t next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1Dull;
  }
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }
};

std::string readAll(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The tokens of a libFuzzer dictionary (-dict=FILE): one "quoted" token a line, with \\, \"
/// and \xNN escapes; names before the quote and comment lines are skipped.
bool readDictionary(const std::string &path, std::vector<std::string> &tokens) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  for (std::string line; std::getline(in, line);) {
    size_t open = line.find('"'), close = line.rfind('"');
    if (line.empty() || line[0] == '#' || open == std::string::npos || close <= open) continue;
    std::string t;
    for (size_t k = open + 1; k < close; ++k) {
      if (line[k] == '\\' && k + 3 < close && line[k + 1] == 'x') {
        t += static_cast<char>(std::stoi(line.substr(k + 2, 2), nullptr, 16));
        k += 3;
      } else if (line[k] == '\\' && k + 1 < close) {
        t += line[++k];
      } else {
        t += line[k];
      }
    }
    tokens.push_back(t);
  }
  return true;
}

std::string mutate(const std::vector<std::string> &corpus, const std::vector<std::string> &tokens, Random &rng,
                   size_t maxLen) {
  std::string s = corpus[rng.below(corpus.size())];
  int count = 1 + static_cast<int>(rng.below(4));
  for (int m = 0; m < count; ++m) {
    size_t at = rng.below(s.size() + 1);
    switch (rng.below(7)) {
      case 0:  // flip a byte
        if (!s.empty()) s[rng.below(s.size())] ^= static_cast<char>(1u << rng.below(8));
        break;
      case 1: {  // delete a slice
        size_t len = 1 + rng.below(16);
        if (at < s.size()) s.erase(at, len);
        break;
      }
      case 2: {  // duplicate a slice
        if (s.empty()) break;
        size_t from = rng.below(s.size()), len = 1 + rng.below(32);
        s.insert(at, s.substr(from, len));
        break;
      }
      case 3:
      case 4:  // insert a token of the dictionary (without one, a byte)
        if (tokens.empty()) s.insert(at, 1, static_cast<char>(rng.below(256)));
        else s.insert(at, tokens[rng.below(tokens.size())]);
        break;
      case 5: {  // splice: this input's head, another's tail
        const std::string &o = corpus[rng.below(corpus.size())];
        s = s.substr(0, at) + o.substr(std::min(o.size(), rng.below(o.size() + 1)));
        break;
      }
      case 6:  // truncate
        s.resize(at);
        break;
    }
  }
  if (s.size() > maxLen) s.resize(maxLen);
  return s;
}

/// The input running now, written out by the crash handler (async-signal-safe calls only).
const std::string *gCurrent = nullptr;

void onCrash(int sig) {
  if (gCurrent) {
    int fd = ::open("crash-input.spl", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ssize_t ignored = ::write(fd, gCurrent->data(), gCurrent->size());
      (void)ignored;
      ::close(fd);
    }
    const char msg[] = "spl_fuzz_frontend: the failing input is in crash-input.spl\n";
    ssize_t ignored = ::write(2, msg, sizeof msg - 1);
    (void)ignored;
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

bool flag(const char *arg, const char *name, long long &value) {
  size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0) return false;
  value = std::atoll(arg + n);
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  long long runs = 1000, seed = 1, maxTime = 0, maxLen = 16384, only = -1;
  std::vector<std::string> corpus, tokens;
  for (int a = 1; a < argc; ++a) {
    const char *arg = argv[a];
    if (std::strncmp(arg, "-dict=", 6) == 0) {
      if (!readDictionary(arg + 6, tokens)) {
        std::fprintf(stderr, "spl_fuzz_frontend: cannot read the dictionary %s\n", arg + 6);
        return 2;
      }
      continue;
    }
    if (flag(arg, "-runs=", runs) || flag(arg, "-seed=", seed) || flag(arg, "-max_total_time=", maxTime) ||
        flag(arg, "-max_len=", maxLen) || flag(arg, "-only=", only))
      continue;
    if (arg[0] == '-') {
      std::fprintf(stderr, "spl_fuzz_frontend: unknown option %s\n", arg);
      return 2;
    }
    std::filesystem::path p(arg);
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      for (const auto &e : std::filesystem::directory_iterator(p))
        if (e.is_regular_file()) corpus.push_back(readAll(e.path()));
    } else if (std::filesystem::is_regular_file(p, ec)) {
      corpus.push_back(readAll(p));
    } else {
      std::fprintf(stderr, "spl_fuzz_frontend: no file or folder %s\n", arg);
      return 2;
    }
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "usage: spl_fuzz_frontend [-runs=N] [-seed=S] [-max_total_time=S] [-only=K] [-dict=FILE] CORPUS...\n");
    return 2;
  }
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, onCrash);
  auto run = [](const std::string &s) {
    gCurrent = &s;
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(s.data()), s.size());
    gCurrent = nullptr;
  };
  auto start = std::chrono::steady_clock::now();
  if (only < 0)
    for (const std::string &s : corpus) run(s);
  long long done = 0;
  for (long long k = 0; k < runs; ++k) {
    Random rng(static_cast<uint64_t>(seed) * 1000003ull + static_cast<uint64_t>(k));
    std::string s = mutate(corpus, tokens, rng, static_cast<size_t>(maxLen));
    if (only >= 0 && k != only) continue;
    run(s);
    ++done;
    if (maxTime > 0 && std::chrono::steady_clock::now() - start > std::chrono::seconds(maxTime)) break;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("spl_fuzz_frontend: %zu corpus inputs and %lld mutants (seed %lld) in %.1f s, no failure\n",
              only < 0 ? corpus.size() : 0, done, seed, secs);
  return 0;
}
