// A Link moves framed messages between this rank and one peer. Each transport (tcp,
// shm, ofi) implements it, and RailLink (rail_link.h) stripes one peer's messages over
// several. The executor owns the ops, posts them, and calls Progress() until they
// complete; nothing here blocks.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "core/status.h"
#include "transport/wire.h"

namespace weft::transport {

struct SendOp {
  WireHeader header;         // header.bytes == payload length
  const void* data = nullptr;
  bool done = false;         // set by the link when every byte is handed off
};

struct RecvOp {
  WireHeader expect;         // the header the next message from the peer must carry
  void* data = nullptr;      // expect.bytes bytes are written here
  bool done = false;         // set by the link when the whole payload has arrived
  // Payload bytes [0, landed) are in `data` and final. Links that deliver in order (tcp,
  // shm) keep it current as bytes arrive; others may leave it at 0 until `done`.
  uint64_t landed = 0;
  // Set by the poster when it consumes the payload as it lands (the executor reduces it
  // piece by piece): a link that chooses how much to deliver per Progress() call then
  // delivers cache-sized pieces (shm single-copy) instead of the whole message at once.
  bool incremental = false;
  // Set by the poster, only where CanConsumeInPlace(expect.bytes) said yes, to take the
  // payload where it lies instead of having it copied into `data` (the executor reduces
  // straight out of a shm ring): the link calls consume(consume_ctx, offset, piece, n)
  // for consecutive pieces of the payload in order, each a whole number of
  // `consume_align` bytes and valid only during the call, and never writes `data`.
  // `landed` still counts the bytes handed over.
  void (*consume)(void* ctx, uint64_t offset, const void* piece, uint64_t n) = nullptr;
  void* consume_ctx = nullptr;
  uint32_t consume_align = 1;  // a power of two, at most 8
};

// Where one buffer lies in memory a peer on this host can map (weftMemAlloc's memfd, or a
// tmpfs file the caller mapped shared), as its owner offers it for a call on registered
// buffers (comm/registered_path.h).
struct SharedRegion {
  int32_t fd = -1;            // the file's descriptor number in the owner's process
  uint32_t backing = 0;       // shm::Backing: a sealed weftMemAlloc memfd, or a tmpfs file
  uint64_t registration = 0;  // the owner's number for the buffer (never reused)
  uint64_t fd_bytes = 0;      // the file's whole size
  uint64_t offset = 0;        // of the buffer's first byte in the file
};
struct BufferOffer {
  int32_t pid = 0;          // the owner's process
  uint32_t registered = 0;  // 1: input and output below are valid; 0: not registered
  uint32_t in_place = 0;    // 1: the owner's input and output overlap
  SharedRegion input, output;
};

class Link {
 public:
  virtual ~Link() = default;

  int peer() const { return peer_; }

  // Queue an op. Ops of each direction complete in FIFO order. The op (and its buffer)
  // must stay valid until `done` is set or the link fails. Never blocks.
  virtual void PostSend(SendOp* op) = 0;
  virtual void PostRecv(RecvOp* op) = 0;

  // Whether a receive of `bytes` posted now may set RecvOp::consume (above). Only a link
  // that holds received bytes in memory of its own before copying them out can.
  virtual bool CanConsumeInPlace(uint64_t bytes) const {
    (void)bytes;
    return false;
  }

  // Move as many bytes as possible without blocking. Returns true if anything moved.
  // Errors: Unavailable (peer closed / died), ProtocolError (garbage on the wire),
  // InvalidUsage (the peer sent a message other than the one expected: a mismatched
  // call; the message names both headers). After an error the link is unusable.
  virtual Result<bool> Progress() = 0;

  // True while posted ops are not yet done.
  virtual bool Busy() const = 0;

  // A receive from any source (exec/p2p_engine.h) looks at each peer's next message
  // before it chooses one. CanPeek: this link can show it. PeekHeader: the header of the
  // next message from the peer, left in place, once it has arrived while no receive is
  // posted here (none until then, or while a receive is posted); or that the peer has
  // closed its end with nothing left to read, as a rank does that is done and destroys
  // its communicator. Errors as Progress() (a peer that failed: its abort frame or
  // cause, garbage, a reset connection); the link is unusable afterwards.
  struct Peeked {
    std::optional<WireHeader> header;
    bool closed = false;
  };
  virtual bool CanPeek() const { return false; }
  virtual Result<Peeked> PeekHeader() { return Peeked{}; }

  // A file descriptor the executor may poll(2) while waiting (POLLIN; POLLOUT when
  // WantsWrite()), or -1 if this link must be polled by calling Progress().
  virtual int PollFd() const { return -1; }
  virtual bool WantsWrite() const { return false; }
  // Whether POLLIN on PollFd() should wake the executor now: false for a link whose fd
  // turns readable with bytes it has not been asked to read yet (tcp, with no receive
  // posted), so that they do not wake it over and over.
  virtual bool WantsRead() const { return true; }

  // Links without a file descriptor may offer a wake word instead (shm). ArmWake()
  // announces that this side is about to sleep and returns the word; from then until
  // DisarmWake() the peer changes the word and wakes its sleepers (core/futex.h)
  // whenever it makes progress on this link. The caller reads the word, runs one more
  // Progress() pass (progress made before the announcement did not ring), and sleeps
  // on the value it read only if that pass moved nothing. Null: the link has none.
  virtual std::atomic<uint32_t>* ArmWake() { return nullptr; }
  virtual void DisarmWake() {}

  // Transport name for logs and errors: "tcp", "shm", "ofi".
  virtual const char* Name() const = 0;

  // Tells the peer this side is gone (its pending and future receives from us fail with
  // "peer closed" at once instead of waiting for their deadline). Used when the
  // communicator fails, so one rank's error reaches every rank quickly. Never blocks;
  // the link must not be used afterwards.
  virtual void Shutdown() = 0;

  // Best effort, never blocks: tells the peer why this side is failing, before Shutdown(),
  // so the peer's error quotes the cause (tcp: an abort frame, see wire.h, written only if
  // the socket takes it now and the stream is at a message boundary; shm: the segment's
  // cause field). The peer reports it from a pending receive (or a failed send, tcp).
  virtual void SendAbort(const Status& cause) { (void)cause; }

  // Flags and buffer offers, for calls on registered buffers (sched::StepKind::kSync,
  // comm/registered_path.h): only a link to a peer that shares this host's memory has
  // them (shm). Flags match in FIFO order, as messages do: the k-th flag this side raises
  // is the k-th the peer takes.
  virtual bool HasFlags() const { return false; }
  // Raises this side's next flag: every store this process made before it is visible to
  // the peer once the peer has taken it. Wakes the peer if it sleeps on its wake word.
  virtual void RaiseFlag() {}
  // Takes the peer's next flag if it has raised it. Errors: Unavailable, naming the peer,
  // when it closed its end or its process died (checked while no flag comes).
  virtual Result<bool> TakeFlag() { return false; }
  // Whether the peer has raised a flag not yet taken (a look, for a waiter about to sleep).
  virtual bool PeerHasFlag() const { return false; }
  // This side's offer for the `agreement`-th call agreed, published by the next
  // RaiseFlag; the peer's, valid once its flag that follows it has been taken. Two slots,
  // by the agreement's parity: a side may write agreement k's offer once it knows the
  // peer has raised its flag for agreement k - 1, so is done reading offer k - 2.
  virtual void SetOffer(uint64_t agreement, const BufferOffer& offer) {
    (void)agreement;
    (void)offer;
  }
  virtual BufferOffer PeerOffer(uint64_t agreement) const {
    (void)agreement;
    return {};
  }

 protected:
  Link(int self, int peer) : self_(self), peer_(peer) {}
  int self_;
  int peer_;
};

}  // namespace weft::transport
