// A stand-in for libFuzzer's main, so every fuzz target also runs as an ordinary test
// in a g++ build without sanitizers: it replays each file of the corpus directories,
// then runs a fixed number of pseudo-random mutations of those seeds. The seed of the
// generator is fixed, so a failure reproduces exactly; the input that crashed is
// written to ./fuzz-crash-<target> before the process dies, ready to replay with
// `<target> fuzz-crash-<target>` here or under libFuzzer.
//
//   <target> [--mutations N] [--seed S] [--max-len L] <corpus dir or file>...
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using Bytes = std::vector<uint8_t>;

// What the crash handler saves: the input being run. Plain globals, read from a
// signal handler with write(2) only.
const uint8_t* g_current = nullptr;
size_t g_current_size = 0;
char g_crash_path[512] = "fuzz-crash";

void SaveCrash(int sig) {
  int fd = ::open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    size_t done = 0;
    while (done < g_current_size) {
      ssize_t w = ::write(fd, g_current + done, g_current_size - done);
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
    ::close(fd);
    const char msg[] = "fuzz driver: crashing input saved to ";
    (void)!::write(2, msg, sizeof(msg) - 1);
    (void)!::write(2, g_crash_path, std::strlen(g_crash_path));
    (void)!::write(2, "\n", 1);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void Run(const Bytes& input) {
  g_current = input.data();
  g_current_size = input.size();
  // A copy of exactly the input's size, so a read past the end is a read past a heap
  // block (caught when a sanitizer is on), as under libFuzzer.
  std::unique_ptr<uint8_t[]> copy(new uint8_t[input.size()]);
  if (!input.empty()) std::memcpy(copy.get(), input.data(), input.size());
  LLVMFuzzerTestOneInput(copy.get(), input.size());
}

// splitmix64: tiny, and the same sequence on every platform.
struct Rng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }
};

// Bytes that tend to matter to these parsers: separators, brackets, digits, edges.
constexpr uint8_t kInteresting[] = {0,   1,   0x7f, 0x80, 0xff, '\n', ' ', ',', '[', ']',
                                    '-', ':', '(',  ')',  'x',  '0',  '9', '^', '=', '#'};
// Little-endian u32 values that hit length checks: zero, tiny, huge, sign edges.
constexpr uint32_t kInterestingU32[] = {0, 1, 4, 5, 8, 0x7f, 0x1000, 0x1001, 0x7fffffff,
                                        0x80000000, 0xfffffffe, 0xffffffff, 4u << 20};

void MutateOnce(Bytes& b, const std::vector<Bytes>& seeds, Rng& rng, size_t max_len) {
  switch (rng.Below(9)) {
    case 0:  // flip one bit
      if (!b.empty()) b[rng.Below(b.size())] ^= static_cast<uint8_t>(1u << rng.Below(8));
      break;
    case 1:  // overwrite a byte with anything
      if (!b.empty()) b[rng.Below(b.size())] = static_cast<uint8_t>(rng.Next());
      break;
    case 2:  // overwrite a byte with an interesting one
      if (!b.empty()) b[rng.Below(b.size())] = kInteresting[rng.Below(sizeof(kInteresting))];
      break;
    case 3:  // insert a few bytes
      for (size_t n = 1 + rng.Below(4); n > 0; --n)
        b.insert(b.begin() + static_cast<long>(rng.Below(b.size() + 1)),
                 rng.Below(2) ? kInteresting[rng.Below(sizeof(kInteresting))]
                              : static_cast<uint8_t>(rng.Next()));
      break;
    case 4: {  // delete a range
      if (b.empty()) break;
      size_t at = rng.Below(b.size());
      size_t n = 1 + rng.Below(std::min<size_t>(b.size() - at, 16));
      b.erase(b.begin() + static_cast<long>(at), b.begin() + static_cast<long>(at + n));
      break;
    }
    case 5:  // truncate
      b.resize(rng.Below(b.size() + 1));
      break;
    case 6: {  // overwrite 4 bytes with an interesting little-endian u32
      if (b.size() < 4) break;
      size_t at = rng.Below(b.size() - 3);
      uint32_t v = kInterestingU32[rng.Below(std::size(kInterestingU32))];
      for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
      break;
    }
    case 7: {  // duplicate a chunk in place
      if (b.empty()) break;
      size_t at = rng.Below(b.size());
      size_t n = 1 + rng.Below(std::min<size_t>(b.size() - at, 32));
      Bytes chunk(b.begin() + static_cast<long>(at), b.begin() + static_cast<long>(at + n));
      b.insert(b.begin() + static_cast<long>(rng.Below(b.size() + 1)), chunk.begin(), chunk.end());
      break;
    }
    case 8: {  // splice: this input's head, another seed's tail
      const Bytes& other = seeds[rng.Below(seeds.size())];
      size_t cut = rng.Below(b.size() + 1);
      size_t from = rng.Below(other.size() + 1);
      b.resize(cut);
      b.insert(b.end(), other.begin() + static_cast<long>(from), other.end());
      break;
    }
  }
  if (b.size() > max_len) b.resize(max_len);
}

bool ReadFile(const std::filesystem::path& p, Bytes* out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  long mutations = 20000;
  uint64_t seed = 1;
  size_t max_len = 4096;
  std::vector<std::filesystem::path> paths;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--mutations" && i + 1 < argc) {
      mutations = std::atol(argv[++i]);
    } else if (a == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--max-len" && i + 1 < argc) {
      max_len = std::strtoul(argv[++i], nullptr, 10);
    } else if (a.rfind("-", 0) == 0) {
      std::fprintf(stderr, "usage: %s [--mutations N] [--seed S] [--max-len L] PATH...\n",
                   argv[0]);
      return 2;
    } else {
      paths.emplace_back(a);
    }
  }
  std::string name = std::filesystem::path(argv[0]).filename().string();
  std::snprintf(g_crash_path, sizeof(g_crash_path), "fuzz-crash-%s", name.c_str());
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) ::signal(sig, SaveCrash);

  // Files in a sorted order, so the mutation sequence is the same on every machine.
  std::vector<std::filesystem::path> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      for (const auto& e : std::filesystem::directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<Bytes> seeds;
  for (const auto& f : files) {
    Bytes b;
    if (!ReadFile(f, &b)) {
      std::fprintf(stderr, "%s: cannot read %s\n", name.c_str(), f.c_str());
      return 2;
    }
    seeds.push_back(std::move(b));
  }
  if (seeds.empty()) seeds.emplace_back();  // an empty corpus still gets mutated

  auto start = std::chrono::steady_clock::now();
  for (const Bytes& s : seeds) Run(s);
  Rng rng{seed};
  for (long i = 0; i < mutations; ++i) {
    Bytes b = seeds[rng.Below(seeds.size())];
    for (size_t n = 1 + rng.Below(4); n > 0; --n) MutateOnce(b, seeds, rng, max_len);
    Run(b);
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %zu seeds replayed, %ld mutations, %.2f s (%.0f execs/s)\n", name.c_str(),
              files.size(), mutations, secs,
              secs > 0 ? static_cast<double>(seeds.size() + mutations) / secs : 0.0);
  return 0;
}
