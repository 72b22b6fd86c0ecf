#include "comm/flight_recorder.h"

#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
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
  std::mutex mu;
  std::set<FlightRecorder*> live;
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

// Installs the SIGUSR1 handler and its thread once, when the directory is set.
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
        std::lock_guard<std::mutex> lock(reg.mu);
        for (FlightRecorder* fr : reg.live) fr->DumpIfEnabled("SIGUSR1");
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

FlightRecorder::FlightRecorder(uint64_t comm_id, int rank, int size)
    : comm_id_(comm_id), rank_(rank), size_(size) {
  auto entries = GetEnvInt("WEFT_FLIGHT_RECORDER_ENTRIES", 64);
  long long n = entries.ok() ? entries.value() : 64;
  n = std::clamp<long long>(n, 1, 100000);
  for (long long i = 0; i < n; ++i) ring_.push_back(std::make_unique<Entry>());
  if (!Dir().empty()) StartSignalDumperOnce();
  Registry& reg = GetRegistry();
  std::lock_guard<std::mutex> lock(reg.mu);
  reg.live.insert(this);
}

FlightRecorder::~FlightRecorder() {
  Registry& reg = GetRegistry();
  std::lock_guard<std::mutex> lock(reg.mu);
  reg.live.erase(this);
}

exec::Progress* FlightRecorder::Begin(uint64_t seq, std::string_view op, uint64_t bytes,
                                      std::string_view dtype, std::string_view algo) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = *ring_[next_ % ring_.size()];
  ++next_;
  e.seq = seq;
  e.op = op;
  e.dtype = dtype;
  e.algo = algo;
  e.bytes = bytes;
  e.status.clear();
  e.start_ns = CoarseNowNs();
  e.end_ns = 0;
  e.running = true;
  e.failed = false;
  e.progress.round.store(0, std::memory_order_relaxed);
  e.progress.waiting_for.store(-1, std::memory_order_relaxed);
  current_ = &e;
  return &e.progress;
}

void FlightRecorder::SetAlgo(std::string_view algo) {
  std::lock_guard<std::mutex> lock(mu_);
  if (current_ != nullptr) current_->algo = algo;
}

void FlightRecorder::End(const Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (current_ == nullptr) return;
  current_->running = false;
  current_->end_ns = status.ok() ? CoarseNowNs() : NowNs();
  current_->failed = !status.ok();
  if (!status.ok()) current_->status = status.ToString().substr(0, 400);
  current_ = nullptr;
}

std::string FlightRecorder::ToJson(std::string_view reason) const {
  std::lock_guard<std::mutex> lock(mu_);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::string out = fmt::format(
      "{{\"weft_flight_recorder\": 1, \"comm\": \"{:016x}\", \"rank\": {}, \"size\": {}, "
      "\"pid\": {}, \"host\": \"{}\", \"reason\": \"{}\", \"time_ns\": {}, \"entries\": [",
      comm_id_, rank_, size_, static_cast<int>(getpid()), JsonEscape(host), JsonEscape(reason),
      NowNs());
  const size_t n = std::min(next_, ring_.size());
  bool first = true;
  for (size_t i = next_ - n; i < next_; ++i) {  // oldest first
    const Entry& e = *ring_[i % ring_.size()];
    out += fmt::format(
        "{}\n  {{\"seq\": {}, \"op\": \"{}\", \"bytes\": {}, \"dtype\": \"{}\", \"algo\": "
        "\"{}\", \"state\": \"{}\", \"round\": {}, \"waiting_for\": {}, \"start_ns\": {}, "
        "\"end_ns\": {}, \"status\": \"{}\"}}",
        first ? "" : ",", e.seq, JsonEscape(e.op), e.bytes, JsonEscape(e.dtype),
        JsonEscape(e.algo), e.running ? "running" : (e.failed ? "failed" : "done"),
        e.progress.round.load(std::memory_order_relaxed),
        e.running ? e.progress.waiting_for.load(std::memory_order_relaxed) : -1, e.start_ns,
        e.end_ns, JsonEscape(e.status));
    first = false;
  }
  out += "\n]}\n";
  return out;
}

void FlightRecorder::DumpIfEnabled(std::string_view reason) const {
  const std::string dir = Dir();
  if (dir.empty()) return;
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
