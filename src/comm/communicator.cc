#include "comm/communicator.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "comm/detect_links.h"
#include "core/log.h"
#include "net/link_speed.h"
#include "transport/wire.h"

namespace weft::comm {
using sched::Collective;

// A call's peer reaches the p2p engine as it is: the two layers' "any source" must agree.
static_assert(kAnySource == exec::kAnySource);

namespace {

// A receive from any source is matched by the worker's engine, among messages that come
// to host memory: not into device buffers, not ordered on a stream.
Status RefuseAnySourceOnDevice(const Call& call, int rank) {
  if (!IsAnySource(call)) return Status::Ok();
  return InvalidArgument(fmt::format(
      "rank {}: recv from any source: only into host memory and without a stream (name the "
      "peer to receive into device memory)",
      rank));
}

}  // namespace

Communicator::Communicator(int rank, int size, uint64_t id, const CommConfig& config,
                           std::unique_ptr<transport::Mesh> mesh, sched::Planner planner,
                           std::shared_ptr<const sched::Topology> topology, Bootstrap bootstrap)
    : rank_(rank),
      size_(size),
      id_(id),
      config_(config),
      bootstrap_(std::move(bootstrap)),
      timeout_s_(config.timeout_s),
      recorder_(std::make_unique<FlightRecorder>(id, rank, size_, config.name)),
      errors_(config.name),
      mesh_(std::move(mesh)),
      executor_(std::make_unique<exec::Executor>(mesh_.get())),
      p2p_(std::make_unique<exec::P2PEngine>(mesh_.get())),
      estimator_(rank, size_, planner, topology),
      plans_(rank, size_, std::move(planner), std::move(topology)),
      registered_(rank, size_),
      device_(DeviceHost(mesh_->host_ids()), p2p_.get(),
              {[this](const Call& c, uint64_t seq) {
                 exec_mu_.AssertHeld();
                 return CheckCall(c, seq);
               },
               [this](const Status& cause) {
                 exec_mu_.AssertHeld();
                 Fail(cause);
               },
               &aborting_}),
      calls_(rank, size_, config.timeout_s, &exec_mu_, this) {}

Result<std::unique_ptr<Communicator>> Communicator::Create(int rank, int size, uint64_t comm_id,
                                                           const transport::AllGatherFn& allgather,
                                                           Bootstrap bootstrap,
                                                           const CommOptions& given) {
  WEFT_ASSIGN_OR_RETURN(CommConfig config, CommConfig::FromEnv(given));
  transport::MeshOptions options;
  options.rank = rank;
  options.size = size;
  options.comm_id = comm_id;
  options.key = bootstrap.key;
  options.mode = config.mode;
  options.local_index = config.local_index;
  options.local_size = config.local_size;
  options.deadline = Deadline::AfterSeconds(config.timeout_s);
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<transport::Mesh> mesh,
                        transport::Mesh::Connect(options, allgather));
  auto topology =
      std::make_shared<const sched::Topology>(sched::Topology::FromHostIds(mesh->host_ids()));
  WEFT_ASSIGN_OR_RETURN(sched::CostModel costs,
                        DetectLinkFigures(mesh.get(), topology, config.costs, config.given_costs,
                                          config.detect_nics, config.timeout_s,
                                          net::kSysClassDir));
  WEFT_ASSIGN_OR_RETURN(sched::Planner planner,
                        sched::Planner::Create(config.algo_override, costs));
  std::unique_ptr<Communicator> comm(new Communicator(rank, size, comm_id, config, std::move(mesh),
                                                      std::move(planner), std::move(topology),
                                                      std::move(bootstrap)));
  // A barrier proves every link works end to end and that every rank is past the
  // rendezvous (so the rank hosting the store may go on).
  WEFT_RETURN_IF_ERROR(comm->Run(MakeBarrier()).WithContext("first barrier after connecting"));
  comm->last_algorithm_.store("", std::memory_order_relaxed);  // the user has run nothing
  WEFT_INFO("communicator {:016x}{}: rank {} of {} connected, timeout {} s", comm_id,
            config.name.empty() ? "" : fmt::format(" (\"{}\")", config.name), rank, size,
            config.timeout_s);
  return comm;
}

Communicator::~Communicator() { calls_.Shutdown(); }

DevicePath::Host Communicator::DeviceHost(const std::vector<std::string>& ids) {
  DevicePath::Host host;
  host.rank = rank_;
  host.size = size_;
  host.timeout_s = config_.timeout_s;  // for calls without their own (Call::timeout_s)
  host.single_host = std::all_of(ids.begin(), ids.end(), [&](auto& id) { return id == ids[0]; });
  // These run on the worker, under exec_mu_, inside DeviceCalls::RunCollective.
  host.allgather = [this](const void* mine, size_t bytes, void* all, uint64_t seq) {
    exec_mu_.AssertHeld();
    return Execute(MakeCollective(Collective::kAllGather, mine, all, bytes, DataType::kUint8),
                   seq, transport::kDeviceSync);
  };
  host.barrier = [this](uint64_t seq) {
    exec_mu_.AssertHeld();
    return Execute(MakeBarrier(), seq, transport::kDeviceSync);
  };
  host.execute = [this](const Call& c, uint64_t seq) {
    exec_mu_.AssertHeld();
    return Execute(c, seq);
  };
  return host;
}

Status Communicator::Run(const Call& issued) {
  const Call call = Stamped(issued);
  if (IsAnySource(call)) {
    // Only the worker's engine chooses the peer: through the queue, and waited for.
    WEFT_ASSIGN_OR_RETURN(std::shared_ptr<Request> request, Submit(issued));
    return request->Wait(calls_.WaitDeadline(1));
  }
  if (calls_.idle() && !aborting_.load(std::memory_order_relaxed) &&
      !DeviceCalls::HasDeviceBuffer(call)) {
    // Nothing queued and the worker idle, and only this thread could change that: run
    // here without the queue's lock. The same collective as last time was validated
    // then (the user's plan is set only by validated calls).
    MutexLock exec_lock(&exec_mu_);
    if (!plans_.HoldsUserCall(call)) WEFT_RETURN_IF_ERROR(ValidateCall(call, rank_, size_));
    return ExecuteOrFail(call, calls_.NextSeq(call));
  }
  WEFT_RETURN_IF_ERROR(ValidateCall(call, rank_, size_));
  if (DeviceCalls::HasDeviceBuffer(call)) {
    // Device buffers without a stream: ordered on the default stream, and (this being
    // the blocking API) waited for.
    WEFT_ASSIGN_OR_RETURN(std::shared_ptr<Request> request, EnqueueOnStream(call, nullptr));
    return request->Wait(calls_.WaitDeadline(1));
  }
  return calls_.RunInTurn(call, [&](uint64_t seq) {
    exec_mu_.AssertHeld();  // RunInTurn holds it around this
    return ExecuteOrFail(call, seq);
  });
}

Result<std::shared_ptr<Request>> Communicator::Submit(const Call& issued) {
  const Call call = Stamped(issued);
  WEFT_RETURN_IF_ERROR(ValidateCall(call, rank_, size_));
  if (DeviceCalls::HasDeviceBuffer(call)) {
    WEFT_RETURN_IF_ERROR(RefuseAnySourceOnDevice(call, rank_));
    WEFT_ASSIGN_OR_RETURN(std::shared_ptr<Request> request, EnqueueOnStream(call, nullptr));
    if (device_.synchronous())  // see RunOnStream
      (void)request->Wait(calls_.WaitDeadline(1));
    return request;
  }
  return calls_.Push(call);
}

Status Communicator::RunOnStream(const Call& issued, void* stream) {
  const Call call = Stamped(issued);
  WEFT_RETURN_IF_ERROR(ValidateCall(call, rank_, size_));
  if (stream == nullptr && !DeviceCalls::HasDeviceBuffer(call)) return Run(call);
  WEFT_RETURN_IF_ERROR(RefuseAnySourceOnDevice(call, rank_));
  Status failed = AsyncError();
  if (!failed.ok()) return RefusedAfterFailure(rank_, call, failed);
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<Request> request, EnqueueOnStream(call, stream));
  // Without stream memory operations nothing holds the stream back: the call itself
  // waits, so that work the caller queues after it cannot overtake it.
  if (device_.synchronous()) return request->Wait(calls_.WaitDeadline(1));
  return Status::Ok();
}

Result<Call> Communicator::CheckForGroup(const Call& issued) const {
  const Call call = Stamped(issued);
  WEFT_RETURN_IF_ERROR(ValidateCall(call, rank_, size_));
  if (DeviceCalls::HasDeviceBuffer(call))
    WEFT_RETURN_IF_ERROR(RefuseAnySourceOnDevice(call, rank_));
  return call;
}

Result<std::shared_ptr<Request>> Communicator::IssueInGroup(const Call& call, void* stream,
                                                            StreamShare* share) {
  if (stream == nullptr && !DeviceCalls::HasDeviceBuffer(call)) return calls_.Push(call);
  Status failed = AsyncError();
  if (!failed.ok()) return RefusedAfterFailure(rank_, call, failed);
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<Request> request, EnqueueOnStream(call, stream, share));
  if (device_.synchronous()) return request;
  return std::shared_ptr<Request>();
}

Result<std::shared_ptr<Request>> Communicator::EnqueueOnStream(const Call& call, void* stream,
                                                               StreamShare* share) {
  WEFT_ASSIGN_OR_RETURN(int device, device_.DeviceOf(call));
  return calls_.Push(call, [&](Task& task) { return device_.Admit(task, device, stream, share); });
}

bool Communicator::PointToPointInFlight() { return !p2p_->Empty(); }

void Communicator::RunTask(Task task) {
  exec_mu_.AssertHeld();  // the queue's worker holds it around this
  const bool p2p = task.call.kind != CallKind::kCollective;
  if (p2p && task.device) {
    device_.StartPointToPoint(std::move(task), failure_);
  } else if (p2p) {
    StartPointToPoint(std::move(task));
  } else if (task.staged) {
    task.request->Complete(device_.RunStaged(task, failure_));
  } else if (task.device) {
    task.request->Complete(device_.RunCollective(task, failure_));
  } else {
    task.request->Complete(ExecuteOrFail(task.call, task.seq));
  }
}

void Communicator::StartPointToPoint(Task task) {
  const Status& failure = FailureAfterAbort();
  if (!failure.ok()) {
    task.request->Complete(RefusedAfterFailure(rank_, task.call, failure));
    return;
  }
  const Call& c = task.call;
  auto request = task.request;
  auto done = [request](Status st) { request->Complete(std::move(st)); };
  Deadline deadline = Deadline::AfterSeconds(TimeoutOf(c));
  size_t bytes = c.count * DataTypeSize(c.dtype);
  if (c.kind == CallKind::kSend)
    p2p_->PostSend(c.peer, task.seq, c.tag, c.dtype, c.send, bytes, deadline, done);
  else
    p2p_->PostRecv(c.peer, c.tag, c.dtype, c.recv, bytes, deadline, done, c.source);
}

void Communicator::ProgressPointToPoint() {
  exec_mu_.AssertHeld();  // the queue's worker holds it around this
  const Status& failure = FailureAfterAbort();
  if (!failure.ok()) {
    p2p_->FailAll(Aborted("the communicator failed: " + failure.ToString()));
    return;
  }
  auto moved = p2p_->Poll();
  if (!moved.ok()) {
    Fail(moved.status());
    p2p_->FailAll(failure_);
    return;
  }
  if (!moved.value()) p2p_->Idle();
}

const Status& Communicator::FailureAfterAbort() {
  if (aborting_.load() && failure_.ok()) Fail(AbortCause(rank_));
  return failure_;
}

Status Communicator::ExecuteOrFail(const Call& call, uint64_t seq) {
  const Status& failure = FailureAfterAbort();
  if (!failure.ok()) return RefusedAfterFailure(rank_, call, failure);
  // A mismatch is refused on every rank alike, before any data moved: the communicator
  // goes on.
  WEFT_RETURN_IF_ERROR(CheckCall(call, seq));
  Status st = Execute(call, seq);
  if (IsFatal(st)) Fail(st);
  return st;
}

Status Communicator::ExchangeCallCheck(const Call& call, uint64_t seq) {
  const CallFingerprint mine = FingerprintOf(call);
  // Both exchanges run under the call's own sequence number: the wire kind tells them
  // apart from the call's messages, and every rank runs the same ones in the same order.
  auto exchange = [&](const void* send, void* recv, size_t count, DataType dtype,
                      Collective coll) {
    exec_mu_.AssertHeld();  // called below, under the caller's lock
    Call check = MakeCollective(coll, send, recv, count, dtype, RedOp::kMax);
    check.timeout_s = call.timeout_s;  // part of the user's call: bounded alike
    Status st = Execute(check, seq, transport::kCallCheck);
    if (st.ok()) return st;
    st = st.WithContext(fmt::format("rank {}: {} seq {}: checking the ranks' calls "
                                    "(WEFT_CHECK_CALLS)", rank_, CallName(call), seq));
    if (IsFatal(st)) Fail(st);
    return st;
  };
  int64_t range[kFingerprintRangeWords];
  int64_t reduced[kFingerprintRangeWords];
  FingerprintRange(mine, range);
  WEFT_RETURN_IF_ERROR(exchange(range, reduced, kFingerprintRangeWords, DataType::kInt64,
                                Collective::kAllReduce));
  if (RangeAgrees(reduced)) return Status::Ok();
  // Every rank saw the same ranges, so every rank is here: learn who passed what.
  uint8_t bytes[kCallFingerprintBytes];
  EncodeFingerprint(mine, bytes);
  std::vector<uint8_t> all(kCallFingerprintBytes * size_);
  WEFT_RETURN_IF_ERROR(exchange(bytes, all.data(), kCallFingerprintBytes, DataType::kUint8,
                                Collective::kAllGather));
  return CompareFingerprints(all.data(), size_, rank_, seq);
}

void Communicator::Fail(const Status& cause) {
  failure_ = cause;
  errors_.RecordFailure(cause);
  if (config_.name.empty())
    WEFT_WARN("{}", cause.ToString());
  else
    WEFT_WARN("communicator \"{}\": {}", config_.name, cause.ToString());
  recorder_->DumpIfEnabled(cause.code() == Code::kDeadlineExceeded ? "timeout" : "failure");
  // The links may hold half a message; close them so that peers waiting on this rank
  // fail now rather than at their deadline, and the error spreads to every rank. Each
  // peer is first told the cause, so its error names the rank and failure at the origin.
  if (mesh_) mesh_->AbortAll(cause);
}

void Communicator::Abort() {
  aborting_.store(true);  // the running call, if any, returns within one poll interval
  for (Task& t : calls_.Stop()) {
    device_.Release(t);
    t.request->Complete(AbortedCall(rank_, t.call));
  }
  {
    MutexLock exec_lock(&exec_mu_);
    if (failure_.ok()) Fail(AbortCause(rank_));
  }
  // The worker sees the queue stopped and empty, fails its sends and receives in flight
  // (failure_ is set) and exits.
  calls_.Join();
  MutexLock exec_lock(&exec_mu_);
  if (p2p_) p2p_->FailAll(AbortCause(rank_));
  mesh_.reset();  // closes sockets, unmaps segments
}

Status Communicator::Execute(const Call& call, uint64_t seq, uint16_t kind) {
  const char* name = CallName(call);
  const char* op = kind == transport::kDeviceSync  ? "device-sync"
                   : kind == transport::kCallCheck ? "call-check"
                                                   : name;
  exec::Progress* progress = recorder_->Begin(seq, op, call.count * DataTypeSize(call.dtype),
                                              DataTypeName(call.dtype));
  // Receives are matched (by tag, where the link can look ahead) and numbered by the
  // engine (exec/p2p_engine.h). Run sends a receive from any source to the worker's
  // engine, never here.
  Status st = call.kind == CallKind::kCollective ? ExecuteSchedule(call, name, seq, kind, progress)
              : call.kind == CallKind::kRecv     ? ReceiveThroughEngine(call)
                                                 : ExecuteSend(call, name, seq, progress);
  recorder_->End(st);
  return st;
}

Status Communicator::ReceiveThroughEngine(const Call& call) {
  // The worker is idle and this thread holds exec_mu_: the engine is this thread's until
  // the receive is done. A failure is returned, not handled: ExecuteOrFail fails the
  // communicator with it.
  recorder_->SetAlgo("p2p");
  std::optional<Status> result;
  p2p_->PostRecv(call.peer, call.tag, call.dtype, call.recv, call.count * DataTypeSize(call.dtype),
                 Deadline::AfterSeconds(TimeoutOf(call)),
                 [&result](Status st) { result = std::move(st); });
  while (!result) {
    if (aborting_.load(std::memory_order_relaxed)) {
      p2p_->FailAll(AbortCause(rank_));
      break;
    }
    auto moved = p2p_->Poll();
    if (!moved.ok()) {
      p2p_->FailAll(moved.status());
      break;
    }
    if (!moved.value()) p2p_->Idle();
  }
  return *result;
}

Status Communicator::ExecuteSend(const Call& call, const char* what, uint64_t seq,
                                 exec::Progress* progress) {
  // A send is a one-round schedule; its sequence number counts the calls between this
  // ordered pair only.
  exec::ExecContext ctx;
  ctx.progress = progress;
  ctx.dtype = call.dtype;
  ctx.op = RedOp::kSum;
  ctx.kind = transport::kPointToPoint;
  ctx.seq = seq;
  ctx.tag = call.tag;
  ctx.deadline = LazyDeadline::AfterSeconds(TimeoutOf(call));
  ctx.what = what;
  ctx.abort = &aborting_;
  sched::Schedule p2p;
  p2p.rounds.push_back(
      {{{sched::StepKind::kSend, call.peer, {sched::Buf::kInput, 0, call.count}, {}}}});
  recorder_->SetAlgo("p2p");
  return executor_->Run(p2p, ctx, {call.send, call.recv, nullptr});
}

Status Communicator::ExecuteSchedule(const Call& call, const char* what, uint64_t seq,
                                     uint16_t kind, exec::Progress* progress) {
  // Registered buffers on every rank: the ranks agree on it first (registered_path.h).
  // One deadline for the whole call, the agreement included.
  const LazyDeadline deadline = LazyDeadline::AfterSeconds(TimeoutOf(call));
  bool registered = false;
  if (registered_.Considers(call, kind, *mesh_)) {
    exec::ExecContext agree;
    agree.progress = progress;
    agree.seq = seq;
    agree.deadline = deadline;
    agree.what = what;
    agree.abort = &aborting_;
    WEFT_ASSIGN_OR_RETURN(registered,
                          registered_.Agree(call, registry_, *mesh_, *executor_, agree));
  }
  BufferMode mode = BufferMode::kPlain;
  if (registered) {
    mode = registered_.may_be_in_place() ? BufferMode::kRegistered
                                         : BufferMode::kRegisteredOutOfPlace;
  }
  // Planned once per argument set (comm/plan_cache.h).
  WEFT_ASSIGN_OR_RETURN(const PreparedCall* plan,
                        plans_.Prepare(call, kind, what, &aborting_, mode));
  recorder_->SetAlgo(plan->algo);
  // The user's calls only (the library's own carry a kind).
  if (kind == 0 && last_algorithm_.load(std::memory_order_relaxed) != plan->algo)
    last_algorithm_.store(plan->algo, std::memory_order_relaxed);
  exec::ExecContext ctx = plan->ctx;
  ctx.progress = progress;
  ctx.seq = seq;
  ctx.deadline = deadline;
  ctx.entered_together = registered;
  WEFT_ASSIGN_OR_RETURN(exec::Buffers bufs, BuffersFor(*plan, call, temps_));
  if (registered) bufs.peers = &registered_.peers();
  WEFT_RETURN_IF_ERROR(executor_->Run(*plan->schedule, ctx, bufs));
  FinishCall(*plan, bufs, size_);
  return Status::Ok();
}

}  // namespace weft::comm
