#include "sched/algorithms/builder.h"

namespace weft::sched::algo {

Builder::PendingRound& Builder::Current() {
  if (open_ < 0) open_ = static_cast<long>(next_++);
  if (rounds_.size() <= static_cast<size_t>(open_)) rounds_.resize(open_ + 1);
  return rounds_[open_];
}

Slice Builder::Moved(const Slice& s) const {
  const size_t by[] = {window_.input, window_.output, window_.scratch};
  return {s.buf, s.offset + by[static_cast<int>(s.buf)], s.count};
}

void Builder::Send(int peer, const Slice& src) {
  if (src.count == 0) return;
  Current().comm.push_back(Step{StepKind::kSend, peer, Moved(src), {}});
}

void Builder::Recv(int peer, const Slice& dst) {
  if (dst.count == 0) return;
  Current().comm.push_back(Step{StepKind::kRecv, peer, {}, Moved(dst)});
}

void Builder::SendToken(int peer) {
  Current().comm.push_back(Step{StepKind::kSend, peer, Scratch(0, 0), {}});
}

void Builder::RecvToken(int peer) {
  Current().comm.push_back(Step{StepKind::kRecv, peer, {}, Scratch(0, 0)});
}

void Builder::Reduce(const Slice& dst, const Slice& src) {
  if (dst.count == 0) return;
  Current().local.push_back(Step{StepKind::kReduce, -1, Moved(src), Moved(dst)});
}

void Builder::Copy(const Slice& dst, const Slice& src) {
  if (dst.count == 0) return;
  if (dst.buf == src.buf && dst.offset == src.offset) return;
  Current().local.push_back(Step{StepKind::kCopy, -1, Moved(src), Moved(dst)});
}

void Builder::Sync(int peer) { Current().comm.push_back(Step{StepKind::kSync, peer, {}, {}}); }

void Builder::PeerReduce(const Slice& dst, int peer, const Slice& peer_src) {
  if (dst.count == 0) return;
  Current().local.push_back(Step{StepKind::kPeerReduce, peer, Moved(peer_src), Moved(dst)});
}

void Builder::PeerRead(const Slice& dst, int peer, const Slice& peer_src) {
  if (dst.count == 0) return;
  Current().local.push_back(Step{StepKind::kPeerRead, peer, Moved(peer_src), Moved(dst)});
}

void Builder::PeerWrite(int peer, const Slice& peer_dst, const Slice& src) {
  if (src.count == 0) return;
  Current().local.push_back(Step{StepKind::kPeerWrite, peer, Moved(src), Moved(peer_dst)});
}

Schedule Builder::Finish(bool inplace_safe) {
  Schedule schedule;
  schedule.scratch_count = scratch_;
  schedule.inplace_safe = inplace_safe;
  for (PendingRound& pending : rounds_) {
    if (pending.comm.empty() && pending.local.empty()) continue;
    Round round;
    round.steps = std::move(pending.comm);
    round.steps.insert(round.steps.end(), pending.local.begin(), pending.local.end());
    schedule.rounds.push_back(std::move(round));
  }
  rounds_.clear();
  open_ = -1;
  next_ = 0;
  return schedule;
}

}  // namespace weft::sched::algo
