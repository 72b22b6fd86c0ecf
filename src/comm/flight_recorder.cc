#include "comm/flight_recorder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "core/env.h"
#include "core/log.h"

namespace weft::comm {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The wall clock at the kernel tick's resolution (1-4 ms), read from memory (~10 ns)
// instead of the time source (~25-70 ns in a VM): every call stamps its start and end,
// and a precise clock cost a tenth of a small allreduce. Failures, whose order across
// ranks the doctor reads, are stamped precisely.
int64_t CoarseNowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Every live recorder of the process, for SIGUSR1. The handler only writes a byte to a
// pipe (async-signal-safe); a thread reads it and dumps, outside the signal context.
struct Registry {
  Mutex mu;
  std::set<FlightRecorder*> live GUARDED_BY(mu);
  int pipe_w = -1;
};

Registry& GetRegistry() {
  static Registry* r = new Registry();  // never destroyed: the thread outlives main
  return *r;
}

void OnSigusr1(int) {
  int fd = GetRegistry().pipe_w;
  if (fd >= 0) {
    char b = 1;
    ssize_t ignored = write(fd, &b, 1);
    (void)ignored;
  }
}

// Installs the SIGUSR1 handler and its thread once, with the first recorder: SIGUSR1 asks
// a rank what it waits for, so it never ends the process (its default action would).
void StartSignalDumperOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return;
    fcntl(fds[1], F_SETFL, O_NONBLOCK);
    GetRegistry().pipe_w = fds[1];
    std::thread([rfd = fds[0]] {
      char b;
      while (read(rfd, &b, 1) > 0) {
        Registry& reg = GetRegistry();
        MutexLock lock(&reg.mu);
        for (FlightRecorder* fr : reg.live) fr->DumpTo(SignalDumpDir(), "SIGUSR1");
      }
    }).detach();
    struct sigaction sa {};
    sa.sa_handler = OnSigusr1;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, nullptr);
  });
}

std::string Dir() { return GetEnv("WEFT_FLIGHT_RECORDER_DIR").value_or(""); }

}  // namespace

std::string JsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20)
          out += fmt::format("\\u{:04x}", c);
        else
          out += static_cast<char>(c);
    }
  }
  return out;
}

FlightRecorder::FlightRecorder(uint64_t comm_id, int rank, int size, std::string name)
    : comm_id_(comm_id), name_(std::move(name)), rank_(rank), size_(size) {
  // Init has already refused a malformed value (CommConfig::FromEnv); a recorder made
  // outside a communicator keeps the default rather than fail its constructor.
  Result<long long> entries = EntriesFromEnv();
  const long long n = entries.ok() ? entries.value() : 64;
  for (long long i = 0; i < n; ++i) ring_.push_back(std::make_unique<Entry>());
  StartSignalDumperOnce();
  Registry& reg = GetRegistry();
  MutexLock lock(&reg.mu);
  reg.live.insert(this);
}

Result<long long> FlightRecorder::EntriesFromEnv() {
  return GetEnvIntInRange("WEFT_FLIGHT_RECORDER_ENTRIES", 64, 1, 100000);
}

FlightRecorder::~FlightRecorder() {
  Registry& reg = GetRegistry();
  MutexLock lock(&reg.mu);
  reg.live.erase(this);
}

namespace {

// The writer's side of an entry's seqlock: `version` is odd from construction to
// destruction, and the release fence orders the odd store before the field stores.
class Writing {
 public:
  explicit Writing(std::atomic<uint32_t>& version) : version_(version) {
    v_ = version_.load(std::memory_order_relaxed);
    version_.store(v_ + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
  }
  ~Writing() { version_.store(v_ + 2, std::memory_order_release); }
  Writing(const Writing&) = delete;
  Writing& operator=(const Writing&) = delete;

 private:
  std::atomic<uint32_t>& version_;
  uint32_t v_;
};

}  // namespace

struct FlightRecorder::Snapshot {
  uint64_t seq = 0, bytes = 0;
  const char* op = "";
  const char* dtype = "";
  const char* algo = "";
  int64_t start_ns = 0, end_ns = 0;
  bool running = false, failed = false;
};

bool FlightRecorder::Read(const Entry& e, Snapshot* s) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  // The writer stays inside an entry for a few stores. A dump that keeps meeting it (the
  // writer re-entering the same entry call after call, or preempted inside it) first
  // yields, then sleeps between tries so the writer can run past the entry, and after
  // kReadBound gives up: the entry is left out rather than shown as a mix of two calls.
  // A hung call writes nothing, so a dump of one succeeds at the first try.
  constexpr int kYieldingTries = 64;
  constexpr auto kReadBound = std::chrono::milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  for (int attempt = 0;; ++attempt) {
    const uint32_t before = e.version.load(std::memory_order_acquire);
    s->seq = e.seq.load(kRelaxed);
    s->bytes = e.bytes.load(kRelaxed);
    s->op = e.op.load(kRelaxed);
    s->dtype = e.dtype.load(kRelaxed);
    s->algo = e.algo.load(kRelaxed);
    s->start_ns = e.start_ns.load(kRelaxed);
    s->end_ns = e.end_ns.load(kRelaxed);
    s->running = e.running.load(kRelaxed);
    s->failed = e.failed.load(kRelaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (before % 2 == 0 && e.version.load(kRelaxed) == before) return true;
    if (attempt < kYieldingTries) {
      std::this_thread::yield();
    } else if (std::chrono::steady_clock::now() - start > kReadBound) {
      return false;
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

exec::Progress* FlightRecorder::Begin(uint64_t seq, const char* op, uint64_t bytes,
                                      const char* dtype) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const size_t index = next_.load(kRelaxed);
  Entry& e = *ring_[index % ring_.size()];
  {
    Writing writing(e.version);
    e.seq.store(seq, kRelaxed);
    e.op.store(op, kRelaxed);
    e.dtype.store(dtype, kRelaxed);
    e.algo.store("", kRelaxed);
    e.bytes.store(bytes, kRelaxed);
    e.start_ns.store(CoarseNowNs(), kRelaxed);
    e.end_ns.store(0, kRelaxed);
    e.running.store(true, kRelaxed);
    e.failed.store(false, kRelaxed);
    e.progress.round.store(0, kRelaxed);
    e.progress.waiting_for.store(-1, kRelaxed);
  }
  next_.store(index + 1, std::memory_order_release);
  current_ = &e;
  return &e.progress;
}

void FlightRecorder::SetAlgo(const char* algo) {
  if (current_ == nullptr) return;
  Writing writing(current_->version);
  current_->algo.store(algo, std::memory_order_relaxed);
}

void FlightRecorder::End(const Status& status) {
  if (current_ == nullptr) return;
  Entry& e = *current_;
  current_ = nullptr;
  if (!status.ok()) {
    // Before `failed` is published, so a dump that sees it reads this text.
    MutexLock lock(&mu_);
    e.status = status.ToString().substr(0, 400);
  }
  Writing writing(e.version);
  e.running.store(false, std::memory_order_relaxed);
  e.end_ns.store(status.ok() ? CoarseNowNs() : NowNs(), std::memory_order_relaxed);
  e.failed.store(!status.ok(), std::memory_order_relaxed);
}

std::string FlightRecorder::ToJson(std::string_view reason) const {
  MutexLock lock(&mu_);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string out = fmt::format(
      "{{\"weft_flight_recorder\": 1, \"comm\": \"{:016x}\", \"name\": \"{}\", \"rank\": {}, "
      "\"size\": {}, \"pid\": {}, \"host\": \"{}\", \"reason\": \"{}\", \"time_ns\": {}, "
      "\"entries\": [",
      comm_id_, JsonEscape(name_), rank_, size_, static_cast<int>(getpid()), JsonEscape(host),
      JsonEscape(reason), NowNs());
  const size_t next = next_.load(std::memory_order_acquire);
  const size_t n = std::min(next, ring_.size());
  bool first = true;
  int unsettled = 0;
  for (size_t i = next - n; i < next; ++i) {  // oldest first
    const Entry& e = *ring_[i % ring_.size()];
    Snapshot s;
    if (!Read(e, &s)) {
      ++unsettled;
      continue;
    }
    out += fmt::format(
        "{}\n  {{\"seq\": {}, \"op\": \"{}\", \"bytes\": {}, \"dtype\": \"{}\", \"algo\": "
        "\"{}\", \"state\": \"{}\", \"round\": {}, \"waiting_for\": {}, \"start_ns\": {}, "
        "\"end_ns\": {}, \"status\": \"{}\"}}",
        first ? "" : ",", s.seq, JsonEscape(s.op), s.bytes, JsonEscape(s.dtype),
        JsonEscape(s.algo), s.running ? "running" : (s.failed ? "failed" : "done"),
        e.progress.round.load(std::memory_order_relaxed),
        s.running ? e.progress.waiting_for.load(std::memory_order_relaxed) : -1, s.start_ns,
        s.end_ns, s.failed ? JsonEscape(e.status) : "");
    first = false;
  }
  out += fmt::format("\n], \"unsettled\": {}}}\n", unsettled);
  return out;
}

std::string SignalDumpDir() {
  std::string dir = Dir();
  if (!dir.empty()) return dir;
  // Per user, so a shared /tmp does not mix users' dumps or let one write another's.
  const std::string tmp = GetEnv("TMPDIR").value_or("/tmp");
  dir = fmt::format("{}/weft-flight-recorder-{}", tmp, getuid());
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    WEFT_WARN("flight recorder: cannot create {}: {}", dir, std::strerror(errno));
  return dir;
}

void FlightRecorder::DumpIfEnabled(std::string_view reason) const {
  const std::string dir = Dir();
  if (dir.empty()) return;
  DumpTo(dir, reason);
}

void FlightRecorder::DumpTo(const std::string& dir, std::string_view reason) const {
  const std::string json = ToJson(reason);
  const std::string path = fmt::format("{}/weft-fr-{:016x}-r{}.json", dir, comm_id_, rank_);
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    WEFT_WARN("flight recorder: cannot write {}", tmp);
    return;
  }
  std::fwrite(json.data(), 1, json.size(), f);
  std::fclose(f);
  std::rename(tmp.c_str(), path.c_str());  // readers never see half a dump
}

}  // namespace weft::comm
