// The shm ring under load: a producer and a consumer thread hammer one ring of a real
// segment (each through its own mapping, as two processes would) with messages of
// random sizes, from empty to three times the ring, framed as ShmLink frames them (a
// whole slot when it fits, else a streamed header and payload; a rewind when drained).
// The consumer checks every byte. Meant to catch ordering bugs on weak memory models
// (run it on aarch64, or under qemu-aarch64) and under ThreadSanitizer.
//
// WEFT_RING_STRESS_ITERS: messages per run (default below). Every wait is bounded: a
// side that sees no progress for kStallSeconds fails the test instead of hanging.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/deadline.h"
#include "core/env.h"
#include "test_util.h"
#include "transport/shm/ring.h"
#include "transport/shm/segment.h"

namespace weft::transport::shm {
namespace {

using Kind = Ring::SlotKind;
using transport::testing::UniqueCommId;

constexpr uint64_t kRingBytes = 4096;
constexpr uint64_t kWholeBytes = 1024;  // ShmLink's kWholeMessageBytes, scaled to the ring
constexpr uint64_t kRewindWindow = 512;
constexpr double kStallSeconds = 20;
constexpr uint64_t kDefaultIters = 400000;

// 32 bytes, as WireHeader: what the consumer needs to regenerate the payload.
struct MsgHeader {
  uint64_t seq = 0;
  uint64_t bytes = 0;
  uint64_t seed = 0;
  uint64_t read_mode = 0;  // how the consumer reads a streamed payload (ReadStreamed)
};
static_assert(sizeof(MsgHeader) == 32);

uint64_t Mix(uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Message h's payload. Every other message holds small integers shaped like the stamps of
// the slots about to come ((n << 2) | kind, unkeyed), so that a consumer that took stale
// payload for a stamp would read a message that was never sent; the rest is seeded noise.
void FillPayload(const MsgHeader& h, std::vector<uint8_t>* out) {
  out->resize(h.bytes);
  for (uint64_t i = 0; i < h.bytes; i += 8) {
    const uint64_t j = i / 8;
    const uint64_t w = h.seq % 2 == 0 ? ((h.seq + 1 + j % 64) << 2) | (1 + j % 2) : Mix(h.seed ^ j);
    std::memcpy(out->data() + i, &w, std::min<uint64_t>(8, h.bytes - i));
  }
}

// 0 (a test that checks nothing) and anything but a number are refused, not defaulted.
uint64_t ItersFromEnv() {
  auto v = GetEnvInt("WEFT_RING_STRESS_ITERS", static_cast<long long>(kDefaultIters));
  EXPECT_TRUE(v.ok() && *v > 0) << "WEFT_RING_STRESS_ITERS: "
                                << (v.ok() ? "must be > 0" : v.status().ToString());
  return v.ok() && *v > 0 ? static_cast<uint64_t>(*v) : 0;
}

// Sizes from empty to three rings: tiny and whole-slot messages, streamed ones that wrap
// the ring's end, and ones larger than the ring, which pass only in pieces.
uint64_t RandomSize(std::mt19937_64& rng) {
  const uint64_t pick = rng() % 100;
  if (pick < 30) return rng() % 65;
  if (pick < 60) return rng() % (kWholeBytes + 1);
  if (pick < 85) return rng() % (kRingBytes + 1);
  return rng() % (3 * kRingBytes + 1);
}

// Shared by both threads: the first failure stops both.
struct Outcome {
  std::atomic<bool> stop{false};
  std::string producer_error, consumer_error;  // each written by its own thread only
};

// Spins (yielding) until `step` returns true; false once `stop` is set or nothing moved
// for kStallSeconds. The clock is read every 256 fruitless spins only.
template <class F>
bool SpinUntil(Outcome& o, F&& step) {
  Deadline stall = Deadline::AfterSeconds(kStallSeconds);
  for (uint32_t spins = 1;; ++spins) {
    if (step()) return true;
    if (o.stop.load(std::memory_order_relaxed)) return false;
    if (spins % 256 == 0 && stall.expired()) return false;
    std::this_thread::yield();
  }
}

void Produce(Ring ring, uint64_t iters, uint64_t seed, Outcome& o) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> payload;
  for (uint64_t seq = 0; seq < iters; ++seq) {
    MsgHeader h{seq, RandomSize(rng), rng(), rng() % 3};
    FillPayload(h, &payload);
    // As ShmLink::ProgressSends: rewind when drained, a whole slot when it fits, else a
    // streamed header (a small message too, when the whole slot does not fit yet).
    bool streamed = false;
    const bool ok = SpinUntil(o, [&] {
      ring.RewindIfDrained(kRewindWindow);
      if (h.bytes <= kWholeBytes && ring.WriteWhole(&h, sizeof(h), payload.data(), h.bytes))
        return true;
      streamed = ring.WriteStreamedHeader(&h, sizeof(h), h.bytes);
      return streamed;
    });
    uint64_t sent = 0;
    const bool ok2 = ok && (!streamed || SpinUntil(o, [&] {
                       sent += ring.Write(payload.data() + sent, h.bytes - sent);
                       return sent == h.bytes;
                     }));
    if (!ok2) {
      if (!o.stop.load())
        o.producer_error =
            fmt::format("producer stalled at message {} ({} bytes, {} sent)", seq, h.bytes, sent);
      o.stop.store(true);
      return;
    }
  }
}

// Reads a streamed payload of h.bytes into `got`, by h.read_mode: 0 Read, 1 ReadInPlace
// byte by byte, 2 ReadInPlace in 8-byte elements (the last partial one bytewise).
bool ReadStreamed(Ring& ring, const MsgHeader& h, std::vector<uint8_t>* got, Outcome& o) {
  got->resize(h.bytes);
  uint64_t have = 0;
  return SpinUntil(o, [&] {
    const uint64_t left = h.bytes - have;
    if (left == 0) return true;
    if (h.read_mode == 0) {
      have += ring.Read(got->data() + have, left);
    } else {
      const size_t align = h.read_mode == 2 && left >= 8 ? 8 : 1;
      ring.ReadInPlace(left, align, [&](const uint8_t* piece, size_t n) {
        std::memcpy(got->data() + have, piece, n);
        have += n;
      });
    }
    return have == h.bytes;
  });
}

void Consume(Ring ring, uint64_t iters, Outcome& o) {
  std::vector<uint8_t> got, want;
  for (uint64_t seq = 0; seq < iters; ++seq) {
    Kind kind = Kind::kNone;
    MsgHeader h;
    bool ok = SpinUntil(o, [&] {
      kind = ring.PeekSlot();
      if (kind == Kind::kRewind) {
        ring.ConsumeSlot(kind, 0);
        return false;
      }
      return kind != Kind::kNone;
    });
    if (ok) {
      ring.CopyFromSlot(&h, sizeof(h));
      if (h.seq != seq || h.bytes > 3 * kRingBytes) {
        o.consumer_error = fmt::format(
            "message {}: a {} slot whose header says message {} of {} bytes (stale bytes read as "
            "a slot?)",
            seq, kind == Kind::kWhole ? "whole" : "streamed", h.seq, h.bytes);
        o.stop.store(true);
        return;
      }
      if (kind == Kind::kWhole) {
        got.resize(h.bytes);
        ring.CopyFromSlot(got.data(), h.bytes, sizeof(h));
        ring.ConsumeSlot(kind, sizeof(h) + h.bytes);
      } else {
        ring.ConsumeSlot(kind, sizeof(h));
        ok = ReadStreamed(ring, h, &got, o);
      }
    }
    if (!ok) {
      if (!o.stop.load())
        o.consumer_error = fmt::format("consumer stalled waiting for message {}", seq);
      o.stop.store(true);
      return;
    }
    FillPayload(h, &want);
    if (got != want) {
      size_t i = 0;
      while (got[i] == want[i]) ++i;
      o.consumer_error =
          fmt::format("message {} ({} bytes, {}): byte {} is {:#x}, expected {:#x}", seq, h.bytes,
                      kind == Kind::kWhole ? "whole" : "streamed", i, got[i], want[i]);
      o.stop.store(true);
      return;
    }
  }
}

TEST(ShmRingStressTest, TwoThreadsRandomSizesEveryByteChecked) {
  const uint64_t iters = ItersFromEnv();
  ASSERT_GT(iters, 0u);
  const uint64_t comm = UniqueCommId();
  auto seg0 = Segment::Create(comm, 0, 1, kRingBytes);
  ASSERT_TRUE(seg0.ok()) << seg0.status().ToString();
  auto seg1 = Segment::Open(comm, 1, 0, Deadline::AfterSeconds(5));
  ASSERT_TRUE(seg1.ok()) << seg1.status().ToString();
  ASSERT_TRUE((*seg0)->WaitPeerAttached(Deadline::AfterSeconds(5)).ok());
  // Side 0 writes ring 0; side 1, through its own mapping, reads it.
  Ring out = (*seg0)->SendRing(), in = (*seg1)->RecvRing();
  ASSERT_EQ(out.size(), kRingBytes);

  const uint64_t seed = std::random_device{}();
  Outcome o;
  const auto start = std::chrono::steady_clock::now();
  std::thread producer([&] { Produce(out, iters, seed, o); });
  std::thread consumer([&] { Consume(in, iters, o); });
  producer.join();
  consumer.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(o.producer_error, "") << "seed " << seed;
  EXPECT_EQ(o.consumer_error, "") << "seed " << seed;
  EXPECT_EQ(in.Readable(), 0u) << "nothing left over";
  std::printf("[ring stress] %llu messages in %.3f s (seed %llu)\n",
              static_cast<unsigned long long>(iters), s, static_cast<unsigned long long>(seed));
}

// The consumer finds the next slot by its stamp, where stale bytes of an earlier lap lie
// until the producer writes there. Here they are an earlier payload's words holding 13,
// which an unkeyed stamp would read as slot 3, kWhole: it must read as nothing yet.
TEST(ShmRingStressTest, StalePayloadIsNotTakenForTheNextStamp) {
  RingControl ctl;
  std::vector<uint8_t> data(4096);
  Ring producer(&ctl, data.data(), data.size()), consumer(&ctl, data.data(), data.size());
  MsgHeader h;
  std::vector<uint64_t> words(2960 / 8, (3u << 2) | 1);
  std::vector<uint8_t> body(2000, 0x5a), got(2960);
  ASSERT_TRUE(producer.WriteWhole(&h, sizeof(h), words.data(), 2960));  // [0, 3000)
  ASSERT_EQ(consumer.PeekSlot(), Kind::kWhole);
  consumer.ConsumeSlot(Kind::kWhole, sizeof(h) + 2960);
  ASSERT_TRUE(producer.WriteWhole(&h, sizeof(h), body.data(), body.size()));  // to 5048
  ASSERT_EQ(consumer.PeekSlot(), Kind::kWhole);
  consumer.ConsumeSlot(Kind::kWhole, sizeof(h) + body.size());
  ASSERT_EQ(ctl.tail.load(), 5048u);
  // The third slot goes at 5056, ring offset 960, inside the first payload's words.
  EXPECT_EQ(consumer.PeekSlot(), Kind::kNone) << "stale payload read as slot 3's stamp";
  ASSERT_TRUE(producer.WriteWhole(&h, sizeof(h), body.data(), 8));
  EXPECT_EQ(consumer.PeekSlot(), Kind::kWhole);
}

// As above where the next slot follows a streamed payload (cleared by the payload's
// last Write) and where it follows a rewind (at the ring's start, here inside the
// streamed payload, whose words hold 17: slot 4, kWhole).
TEST(ShmRingStressTest, StalePayloadIsNotTakenForAStampAfterAStreamOrARewind) {
  RingControl ctl;
  std::vector<uint8_t> data(4096);
  Ring producer(&ctl, data.data(), data.size()), consumer(&ctl, data.data(), data.size());
  MsgHeader h;
  std::vector<uint64_t> first(2960 / 8, (3u << 2) | 1), second(2000 / 8, (4u << 2) | 1);
  std::vector<uint8_t> got(2000);
  ASSERT_TRUE(producer.WriteWhole(&h, sizeof(h), first.data(), 2960));  // [0, 3000)
  ASSERT_EQ(consumer.PeekSlot(), Kind::kWhole);
  consumer.ConsumeSlot(Kind::kWhole, sizeof(h) + 2960);
  // Slot 2 at 3008, its payload [3048, 5048), wrapping to [0, 952) of the ring.
  ASSERT_TRUE(producer.WriteStreamedHeader(&h, sizeof(h), 2000));
  ASSERT_EQ(producer.Write(second.data(), 1000), 1000u);
  ASSERT_EQ(consumer.PeekSlot(), Kind::kStreamed);
  consumer.ConsumeSlot(Kind::kStreamed, sizeof(h));
  ASSERT_EQ(consumer.Read(got.data(), 1000), 1000u);
  ASSERT_EQ(producer.Write(reinterpret_cast<uint8_t*>(second.data()) + 1000, 1000), 1000u);
  ASSERT_EQ(consumer.Read(got.data() + 1000, 1000), 1000u);
  EXPECT_EQ(std::memcmp(got.data(), second.data(), 2000), 0);
  EXPECT_EQ(consumer.PeekSlot(), Kind::kNone) << "the first payload's 13 read as slot 3";
  // Slot 3 (5056, ring offset 960) rewinds; slot 4 goes at the ring's start.
  ASSERT_TRUE(producer.RewindIfDrained(64));
  ASSERT_EQ(consumer.PeekSlot(), Kind::kRewind);
  consumer.ConsumeSlot(Kind::kRewind, 0);
  EXPECT_EQ(consumer.PeekSlot(), Kind::kNone) << "the second payload's 17 read as slot 4";
  ASSERT_TRUE(producer.WriteWhole(&h, sizeof(h), got.data(), 8));
  EXPECT_EQ(consumer.PeekSlot(), Kind::kWhole);
}

}  // namespace
}  // namespace weft::transport::shm
