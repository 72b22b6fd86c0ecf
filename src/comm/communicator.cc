#include "comm/communicator.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "bootstrap/launcher_env.h"
#include "comm/call_check.h"
#include "comm/detect_links.h"
#include "core/env.h"
#include "core/log.h"
#include "exec/executor.h"
#include "exec/reduce.h"
#include "gpu/runtime.h"
#include "net/link_speed.h"
#include "transport/wire.h"

namespace weft::comm {
namespace {

using sched::Collective;

// Schedules are cached per (collective, root, count, algorithm); a cap keeps a job that
// sweeps sizes from growing without bound.
constexpr size_t kMaxCachedSchedules = 256;

// This process's local rank and the number of ranks on its host from its launcher
// (torchrun, Slurm, Open MPI, weftrun), or {-1, 0} where none says (a unique id passed by
// hand): which ofi domains (NICs) its endpoints open, and how many
// (transport::MeshOptions::local_index, local_size). The launcher's, not the
// communicator's: they are known before any exchange (the endpoints' addresses go in the
// card exchanged once), and a process keeps its NICs in every communicator it joins,
// split or not.
struct LocalPlace {
  int index = -1;
  int size = 0;
};
LocalPlace LauncherLocalPlace() {
  Result<bootstrap::LaunchInfo> launch = bootstrap::DetectLaunch();
  if (!launch.ok()) return {};
  return {launch->local_rank, launch->local_world_size};
}

bool IsFatal(const Status& st) {
  return st.code() != Code::kInvalidArgument && st.code() != Code::kOk;
}

}  // namespace

Communicator::Communicator(int rank, int size, uint64_t id, sched::Planner planner,
                           double timeout_s)
    : rank_(rank),
      size_(size),
      id_(id),
      planner_(std::move(planner)),
      timeout_s_(timeout_s),
      send_seq_(size, 0),
      recv_seq_(size, 0),
      recorder_(std::make_unique<FlightRecorder>(id, rank, size)) {}

Result<std::unique_ptr<Communicator>> Communicator::Create(int rank, int size, uint64_t comm_id,
                                                           const transport::AllGatherFn& allgather,
                                                           Bootstrap bootstrap) {
  WEFT_ASSIGN_OR_RETURN(double timeout_s, TimeoutSeconds());
  WEFT_ASSIGN_OR_RETURN(transport::TransportMode mode, transport::TransportModeFromEnv());
  std::vector<std::string> given_costs;  // the keys WEFT_COST_MODEL sets: detection keeps them
  WEFT_ASSIGN_OR_RETURN(
      sched::CostModel costs,
      sched::CostModel::Parse(GetEnv("WEFT_COST_MODEL").value_or(""), &given_costs));
  WEFT_ASSIGN_OR_RETURN(bool detect_nics, DetectNicsFromEnv());
  const std::string algo_override = GetEnv("WEFT_ALGO").value_or("");
  // Parsed before connecting so that a bad WEFT_ALGO fails at once; rebuilt below with
  // the detected link figures.
  WEFT_ASSIGN_OR_RETURN(sched::Planner planner, sched::Planner::Create(algo_override, costs));
  WEFT_ASSIGN_OR_RETURN(CheckCalls check_calls,
                        ParseCheckCalls(GetEnv("WEFT_CHECK_CALLS").value_or("")));

  transport::MeshOptions options;
  options.rank = rank;
  options.size = size;
  options.comm_id = comm_id;
  options.key = bootstrap.key;
  options.mode = mode;
  const LocalPlace place = LauncherLocalPlace();
  options.local_index = place.index;
  options.local_size = place.size;
  options.deadline = Deadline::AfterSeconds(timeout_s);
  WEFT_ASSIGN_OR_RETURN(std::unique_ptr<transport::Mesh> mesh,
                        transport::Mesh::Connect(options, allgather));
  auto topology =
      std::make_shared<const sched::Topology>(sched::Topology::FromHostIds(mesh->host_ids()));

  WEFT_ASSIGN_OR_RETURN(costs, DetectLinkFigures(mesh.get(), topology, costs, given_costs,
                                                 detect_nics, timeout_s, net::kSysClassDir));
  WEFT_ASSIGN_OR_RETURN(planner, sched::Planner::Create(algo_override, costs));

  std::unique_ptr<Communicator> comm(
      new Communicator(rank, size, comm_id, std::move(planner), timeout_s));
  comm->bootstrap_ = std::move(bootstrap);
  comm->check_calls_ = check_calls;
  comm->mesh_ = std::move(mesh);
  comm->topology_ = std::move(topology);
  comm->executor_ = std::make_unique<exec::Executor>(comm->mesh_.get());
  comm->p2p_ = std::make_unique<exec::P2PEngine>(comm->mesh_.get());

  // A barrier proves every link works end to end and that every rank is past the
  // rendezvous (so the rank hosting the store may go on).
  Call barrier;
  barrier.coll = Collective::kBarrier;
  WEFT_RETURN_IF_ERROR(comm->Run(barrier).WithContext("first barrier after connecting"));
  comm->last_algorithm_.store("", std::memory_order_relaxed);  // the user has run nothing
  WEFT_INFO("communicator {:016x}: rank {} of {} connected", comm_id, rank, size);
  return comm;
}

Communicator::~Communicator() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

uint64_t Communicator::NextSeq(const Call& call) {
  switch (call.kind) {
    case CallKind::kCollective: return coll_seq_++;
    case CallKind::kSend: return send_seq_[call.peer]++;
    case CallKind::kRecv: return recv_seq_[call.peer]++;
  }
  return 0;
}

Status Communicator::Run(const Call& call) {
  if (idle_.load(std::memory_order_acquire) && !aborting_.load(std::memory_order_relaxed) &&
      !HasDeviceBuffer(call)) {
    // Nothing queued and the worker idle, and only this thread could change that: run
    // here without the submission lock. The same collective as last time was validated
    // then (the prepared call is set only by validated calls).
    std::lock_guard<std::mutex> exec_lock(exec_mu_);
    if (!user_plan_.Holds(call, static_cast<uint16_t>(call.coll)))
      WEFT_RETURN_IF_ERROR(ValidateCall(call, rank_, size_));
    return ExecuteOrFail(call, NextSeq(call));
  }
  WEFT_RETURN_IF_ERROR(ValidateCall(call, rank_, size_));
  if (HasDeviceBuffer(call)) {
    // Device buffers without a stream: ordered on the default stream, and (this being
    // the blocking API) waited for.
    WEFT_ASSIGN_OR_RETURN(std::shared_ptr<Request> request, EnqueueOnStream(call, nullptr));
    return request->Wait(Deadline::AfterSeconds(timeout_s_ * 2 + 60));
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (stop_) return AbortedCall(call);
  uint64_t seq = NextSeq(call);
  if (queue_.empty() && !worker_busy_) {
    // Nothing ahead of us: run on this thread. Take exec_mu_ before releasing mu_ so that
    // anything submitted meanwhile runs after this call.
    std::lock_guard<std::mutex> exec_lock(exec_mu_);
    lock.unlock();
    return ExecuteOrFail(call, seq);
  }
  auto request = std::make_shared<Request>();
  queue_.push_back({call, seq, request, false, {}});
  idle_.store(false, std::memory_order_relaxed);
  // The call itself is bounded by WEFT_TIMEOUT once it starts, and so is each call queued
  // ahead of it, so this bound is generous but finite.
  Deadline deadline = Deadline::AfterSeconds(timeout_s_ * (1.0 + queue_.size()) + 60);
  if (!worker_.joinable()) worker_ = std::thread([this] { WorkerLoop(); });
  cv_.notify_all();
  lock.unlock();
  return request->Wait(deadline);
}

Result<std::shared_ptr<Request>> Communicator::Submit(const Call& call) {
  WEFT_RETURN_IF_ERROR(ValidateCall(call, rank_, size_));
  if (HasDeviceBuffer(call)) {
    WEFT_ASSIGN_OR_RETURN(std::shared_ptr<Request> request, EnqueueOnStream(call, nullptr));
    if (device_->gate().synchronous())  // see RunOnStream
      (void)request->Wait(Deadline::AfterSeconds(timeout_s_ * 2 + 60));
    return request;
  }
  auto request = std::make_shared<Request>();
  std::lock_guard<std::mutex> lock(mu_);
  if (stop_) return AbortedCall(call);
  if (!worker_.joinable()) worker_ = std::thread([this] { WorkerLoop(); });
  queue_.push_back({call, NextSeq(call), request, false, {}});
  idle_.store(false, std::memory_order_relaxed);
  cv_.notify_all();
  return request;
}

Status Communicator::RunOnStream(const Call& call, void* stream) {
  WEFT_RETURN_IF_ERROR(ValidateCall(call, rank_, size_));
  if (stream == nullptr && !HasDeviceBuffer(call)) return Run(call);
  Status failed = AsyncError();
  if (!failed.ok())
    return RefusedAfterFailure(call, failed);
  WEFT_ASSIGN_OR_RETURN(std::shared_ptr<Request> request, EnqueueOnStream(call, stream));
  // Without stream memory operations nothing holds the stream back: the call itself
  // waits, so that work the caller queues after it cannot overtake it.
  if (device_->gate().synchronous())
    return request->Wait(Deadline::AfterSeconds(timeout_s_ * 2 + 60));
  return Status::Ok();
}

Status Communicator::AsyncError() {
  std::lock_guard<std::mutex> lock(error_mu_);
  return async_error_;
}

bool Communicator::HasDeviceBuffer(const Call& call) const {
  if (!gpu::Available()) return false;  // decided once per process; then free
  return gpu::Classify(call.send).device || gpu::Classify(call.recv).device;
}

Result<std::shared_ptr<Request>> Communicator::EnqueueOnStream(const Call& call, void* stream) {
  const char* name = CallName(call);
  if (!gpu::Available())
    return InvalidArgument(fmt::format("rank {}: {}: a CUDA stream was given, but {}", rank_,
                                       name, gpu::UnavailableReason()));
  int device = -1;
  for (const void* p : {call.send, static_cast<const void*>(call.recv)}) {
    gpu::PointerInfo info = gpu::Classify(p);
    if (!info.device) continue;
    if (device >= 0 && info.device_id != device)
      return InvalidArgument(fmt::format(
          "rank {}: {}: the buffers are on two devices ({} and {})", rank_, name, device,
          info.device_id));
    device = info.device_id;
  }
  if (device < 0) device = gpu::CurrentDevice();
  std::unique_lock<std::mutex> lock(mu_);
  if (stop_) return AbortedCall(call);
  WEFT_RETURN_IF_ERROR(EnsureDevicePath(device));
  if (device != device_->device())
    return InvalidArgument(fmt::format(
        "rank {}: {}: buffers on CUDA device {}, but this communicator uses device {} "
        "(one device per rank, as in NCCL)",
        rank_, name, device, device_->device()));
  auto ticket = device_->gate().Begin(stream);
  if (!ticket.ok())
    return ticket.status().WithContext(fmt::format("rank {}: {}: ordering on the stream",
                                                   rank_, name));
  auto request = std::make_shared<Request>();
  queue_.push_back({call, NextSeq(call), request, true, ticket.value()});
  idle_.store(false, std::memory_order_relaxed);
  if (!worker_.joinable()) worker_ = std::thread([this] { WorkerLoop(); });
  cv_.notify_all();
  return request;
}

Status Communicator::EnsureDevicePath(int device) {
  if (device_) return Status::Ok();
  DevicePath::Host host;
  host.rank = rank_;
  host.size = size_;
  host.timeout_s = timeout_s_;
  const auto& ids = mesh_->host_ids();
  host.single_host = std::all_of(ids.begin(), ids.end(), [&](auto& id) { return id == ids[0]; });
  // These run on the worker, under exec_mu_, inside ExecuteDeviceTask.
  host.allgather = [this](const void* mine, size_t bytes, void* all, uint64_t seq) {
    Call c;
    c.coll = Collective::kAllGather;
    c.send = mine;
    c.recv = all;
    c.count = bytes;
    c.dtype = DataType::kUint8;
    return Execute(c, seq, transport::kDeviceSync);
  };
  host.barrier = [this](uint64_t seq) {
    Call c;
    c.coll = Collective::kBarrier;
    return Execute(c, seq, transport::kDeviceSync);
  };
  host.execute = [this](const Call& c, uint64_t seq) { return Execute(c, seq); };
  WEFT_ASSIGN_OR_RETURN(device_, DevicePath::Create(device, std::move(host)));
  return Status::Ok();
}

Status Communicator::ExecuteDeviceTask(Task& task) {
  Status st;
  if (!failure_.ok()) {
    st = RefusedAfterFailure(task.call, failure_);
  } else {
    Deadline deadline = Deadline::AfterSeconds(timeout_s_);
    st = gpu::SetDevice(device_->device());
    if (st.ok()) st = device_->gate().WaitReady(task.ticket, deadline);
    if (st.ok()) {
      // A mismatch is refused on every rank alike, before any data moved: no Fail here.
      Status checked = CheckCall(task.call, task.seq);
      if (!checked.ok()) {
        device_->gate().Release(task.ticket);
        return checked;
      }
    }
    if (st.ok()) st = device_->RunCollective(task.call, task.seq, deadline);
    if (!st.ok()) {
      st = st.WithContext(fmt::format("rank {}: {} seq {} on device buffers", rank_,
                                      CallName(task.call), task.seq));
      if (IsFatal(st)) Fail(st);
    }
  }
  // Always, so the caller's stream never waits forever (on error its output is undefined
  // and the communicator reports the error).
  device_->gate().Release(task.ticket);
  return st;
}

void Communicator::StartDevicePointToPoint(Task task) {
  const Call& c = task.call;
  auto request = task.request;
  DevicePath* dev = device_.get();
  auto ticket = task.ticket;
  auto finish = [dev, request, ticket](Status st) {
    dev->gate().Release(ticket);
    request->Complete(std::move(st));
  };
  if (!failure_.ok()) {
    finish(RefusedAfterFailure(c, failure_));
    return;
  }
  Deadline deadline = Deadline::AfterSeconds(timeout_s_);
  const size_t bytes = c.count * DataTypeSize(c.dtype);
  // Staged through host memory owned by the operation until it completes.
  auto staging = std::make_shared<std::vector<char>>(bytes);
  Status st = gpu::SetDevice(dev->device());
  if (st.ok()) st = dev->gate().WaitReady(ticket, deadline);
  if (st.ok() && c.kind == CallKind::kSend)
    st = dev->CopyToHost(staging->data(), c.send, bytes, deadline);
  if (!st.ok()) {
    st = st.WithContext(fmt::format("rank {}: {} to/from rank {} on device buffers", rank_,
                                    CallName(c), c.peer));
    Fail(st);
    finish(st);
    return;
  }
  if (c.kind == CallKind::kSend) {
    p2p_->PostSend(c.peer, task.seq, c.dtype, staging->data(), bytes, deadline,
                   [finish, staging](Status s) { finish(std::move(s)); });
  } else {
    void* dst = c.recv;
    p2p_->PostRecv(c.peer, task.seq, c.dtype, staging->data(), bytes, deadline,
                   [finish, staging, dev, dst, bytes, deadline](Status s) {
                     if (s.ok()) s = dev->CopyFromHost(dst, staging->data(), bytes, deadline);
                     finish(std::move(s));
                   });
  }
}

void Communicator::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    bool p2p_idle = p2p_->Empty();  // only this thread touches p2p_ while worker_busy_
    if (queue_.empty() && p2p_idle) {
      worker_busy_ = false;
      // Release: the submitting thread that reads it sees this worker's last call done.
      idle_.store(true, std::memory_order_release);
      if (stop_) return;
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      continue;
    }
    worker_busy_ = true;
    bool next_is_p2p = !queue_.empty() && queue_.front().call.kind != CallKind::kCollective;
    if (queue_.empty() || (!next_is_p2p && !p2p_idle)) {
      // Sends and receives in flight, and nothing that may start before they finish.
      lock.unlock();
      {
        std::lock_guard<std::mutex> exec_lock(exec_mu_);
        ProgressPointToPoint();
      }
      lock.lock();
      continue;
    }
    Task task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    {
      std::lock_guard<std::mutex> exec_lock(exec_mu_);
      if (next_is_p2p && task.device) {
        StartDevicePointToPoint(std::move(task));
      } else if (next_is_p2p) {
        StartPointToPoint(std::move(task));
      } else if (task.device) {
        task.request->Complete(ExecuteDeviceTask(task));
      } else {
        task.request->Complete(ExecuteOrFail(task.call, task.seq));
      }
    }
    lock.lock();
  }
}

void Communicator::StartPointToPoint(Task task) {
  if (aborting_.load() && failure_.ok()) Fail(AbortCause());
  if (!failure_.ok()) {
    task.request->Complete(RefusedAfterFailure(task.call, failure_));
    return;
  }
  const Call& c = task.call;
  auto request = task.request;
  auto done = [request](Status st) { request->Complete(std::move(st)); };
  Deadline deadline = Deadline::AfterSeconds(timeout_s_);
  size_t bytes = c.count * DataTypeSize(c.dtype);
  if (c.kind == CallKind::kSend)
    p2p_->PostSend(c.peer, task.seq, c.dtype, c.send, bytes, deadline, done);
  else
    p2p_->PostRecv(c.peer, task.seq, c.dtype, c.recv, bytes, deadline, done);
}

void Communicator::ProgressPointToPoint() {
  if (aborting_.load() && failure_.ok()) Fail(AbortCause());
  if (!failure_.ok()) {
    p2p_->FailAll(Aborted("the communicator failed: " + failure_.ToString()));
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

Status Communicator::ExecuteOrFail(const Call& call, uint64_t seq) {
  if (aborting_.load() && failure_.ok()) Fail(AbortCause());
  if (!failure_.ok()) {
    return RefusedAfterFailure(call, failure_);
  }
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
    Call c;
    c.coll = coll;
    c.send = send;
    c.recv = recv;
    c.count = count;
    c.dtype = dtype;
    c.op = RedOp::kMax;
    Status st = Execute(c, seq, transport::kCallCheck);
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
  {
    std::lock_guard<std::mutex> lock(error_mu_);
    if (async_error_.ok()) async_error_ = cause;
  }
  WEFT_WARN("{}", cause.ToString());
  recorder_->DumpIfEnabled(cause.code() == Code::kDeadlineExceeded ? "timeout" : "failure");
  // The links may hold half a message; close them so that peers waiting on this rank
  // fail now rather than at their deadline, and the error spreads to every rank. Each
  // peer is first told the cause, so its error names the rank and failure at the origin.
  if (mesh_) mesh_->AbortAll(cause);
}

Status Communicator::AbortCause() const {
  return Aborted(fmt::format("rank {} called weftCommAbort", rank_));
}

Status Communicator::RefusedAfterFailure(const Call& call, const Status& cause) const {
  return Aborted(fmt::format("rank {}: {} refused: the communicator failed earlier: {}", rank_,
                             CallName(call), cause.ToString()));
}

Status Communicator::AbortedCall(const Call& call) const {
  return Aborted(fmt::format("rank {}: {} refused: the communicator was aborted (weftCommAbort)",
                             rank_, CallName(call)));
}

void Communicator::Abort() {
  aborting_.store(true);  // the running call, if any, returns within one poll interval
  std::deque<Task> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    dropped.swap(queue_);
    cv_.notify_all();
  }
  for (Task& t : dropped) {
    // A queued device call holds a ticket on its stream: release it, or a stream parked
    // behind the call (WEFT_CUDA_STREAM_WAIT=memop) would wait forever.
    if (t.device && device_) device_->gate().Release(t.ticket);
    t.request->Complete(AbortedCall(t.call));
  }
  {
    std::lock_guard<std::mutex> exec_lock(exec_mu_);
    if (failure_.ok()) Fail(AbortCause());
  }
  // The worker sees stop_ with an empty queue, fails its sends and receives in flight
  // (failure_ is set) and exits.
  if (worker_.joinable() && worker_.get_id() != std::this_thread::get_id()) worker_.join();
  std::lock_guard<std::mutex> exec_lock(exec_mu_);
  if (p2p_) p2p_->FailAll(AbortCause());
  mesh_.reset();  // closes sockets, unmaps segments
}

Result<const sched::Algorithm*> Communicator::ChooseAlgorithm(const sched::CollectiveSpec& spec,
                                                              size_t esize) {
  const size_t bytes = spec.count * esize;
  const auto key = std::make_tuple(static_cast<int>(spec.coll), spec.root, bytes);
  auto it = choices_.find(key);
  if (it != choices_.end()) return it->second;
  WEFT_ASSIGN_OR_RETURN(sched::PlanChoice choice, planner_.Explain({spec, esize}));
  // Size class k holds [2^(k-1), 2^k) bytes (class 0: empty calls).
  int size_class = 0;
  while (size_class < 63 && (bytes >> size_class) != 0) ++size_class;
  if (rank_ == 0 && explained_.insert({static_cast<int>(spec.coll), size_class}).second) {
    const size_t lo = size_class == 0 ? 0 : size_t{1} << (size_class - 1);
    WEFT_INFO("planner: {} of {}..{} bytes on {} ranks -> {} ({})",
              sched::CollectiveName(spec.coll), lo, size_class == 0 ? 0 : 2 * lo - 1, size_,
              choice.algorithm->name, choice.reason);
  }
  if (choices_.size() >= kMaxCachedSchedules) choices_.clear();
  choices_.emplace(key, choice.algorithm);
  return choice.algorithm;
}

Result<const sched::Schedule*> Communicator::LookUpSchedule(const sched::CollectiveSpec& call_spec,
                                                            size_t esize, const char** algo_name) {
  sched::CollectiveSpec spec = call_spec;
  spec.topology = topology_;  // copied here, on a miss, not per call
  WEFT_ASSIGN_OR_RETURN(const sched::Algorithm* algo, ChooseAlgorithm(spec, esize));
  *algo_name = algo->name;
  auto key = std::make_tuple(static_cast<int>(spec.coll), spec.root, spec.count,
                             static_cast<const void*>(algo));
  auto it = schedules_.find(key);
  if (it != schedules_.end()) return it->second.get();
  if (schedules_.size() >= kMaxCachedSchedules) {
    schedules_.clear();
    user_plan_.valid = own_plan_.valid = false;  // their schedules were among them
  }
  auto schedule = std::make_unique<sched::Schedule>(algo->build(spec));
  WEFT_TRACE("{} count {} -> {}:\n{}", sched::CollectiveName(spec.coll), spec.count, algo->name,
             sched::ToString(*schedule));
  const sched::Schedule* result = schedule.get();
  schedules_.emplace(key, std::move(schedule));
  return result;
}

Status Communicator::Execute(const Call& call, uint64_t seq, uint16_t kind) {
  const char* name = CallName(call);
  const char* op = kind == transport::kDeviceSync  ? "device-sync"
                   : kind == transport::kCallCheck ? "call-check"
                                                   : name;
  exec::Progress* progress = recorder_->Begin(seq, op, call.count * DataTypeSize(call.dtype),
                                              DataTypeName(call.dtype));
  Status st = ExecuteSchedule(call, name, seq, kind, progress);
  recorder_->End(st);
  return st;
}

Status Communicator::ExecuteSchedule(const Call& call, const char* what, uint64_t seq,
                                     uint16_t kind, exec::Progress* progress) {
  if (call.kind != CallKind::kCollective) {
    // A point-to-point call is a one-round schedule; its sequence number counts the
    // calls between this ordered pair only.
    exec::ExecContext ctx;
    ctx.progress = progress;
    ctx.dtype = call.dtype;
    ctx.op = RedOp::kSum;
    ctx.kind = transport::kPointToPoint;
    ctx.seq = seq;
    ctx.deadline = LazyDeadline::AfterSeconds(timeout_s_);
    ctx.what = what;
    ctx.abort = &aborting_;
    sched::Schedule p2p;
    sched::Step step;
    if (call.kind == CallKind::kSend) {
      step = {sched::StepKind::kSend, call.peer, {sched::Buf::kInput, 0, call.count}, {}};
    } else {
      step = {sched::StepKind::kRecv, call.peer, {}, {sched::Buf::kOutput, 0, call.count}};
    }
    p2p.rounds.push_back({{step}});
    recorder_->SetAlgo("p2p");
    return executor_->Run(p2p, ctx, {call.send, call.recv, nullptr});
  }

  // Planned once per argument set (comm/prepared_call.h): the user's calls in one slot,
  // the library's own (a kind: the call check before a rooted collective, the device
  // path's synchronisation) in the other, so neither evicts the other.
  PlanSlot& slot = kind == 0 ? user_plan_ : own_plan_;
  if (!slot.Holds(call, kind != 0 ? kind : static_cast<uint16_t>(call.coll))) {
    // The schedule depends on the shape alone: the slot's serves other buffers or op.
    const sched::Schedule* schedule = slot.plan.schedule;
    const char* algo = slot.plan.algo;
    const Call& last = slot.plan.call;
    if (!slot.valid || last.coll != call.coll || last.root != call.root ||
        last.count != call.count || DataTypeSize(last.dtype) != DataTypeSize(call.dtype)) {
      sched::CollectiveSpec spec{call.coll, rank_, size_, call.root, call.count, nullptr};
      if (call.coll == Collective::kBarrier) spec.count = 0;
      WEFT_ASSIGN_OR_RETURN(schedule, LookUpSchedule(spec, DataTypeSize(call.dtype), &algo));
    }
    slot.plan = PrepareCall(call, rank_, size_, *schedule, algo, kind, what, &aborting_);
    slot.valid = true;
  }
  const PreparedCall* plan = &slot.plan;
  recorder_->SetAlgo(plan->algo);
  // The user's calls only (the library's own carry a kind).
  if (kind == 0 && last_algorithm_.load(std::memory_order_relaxed) != plan->algo) {
    last_algorithm_.store(plan->algo, std::memory_order_relaxed);
  }
  exec::ExecContext ctx = plan->ctx;
  ctx.progress = progress;
  ctx.seq = seq;
  ctx.deadline = LazyDeadline::AfterSeconds(timeout_s_);
  WEFT_ASSIGN_OR_RETURN(exec::Buffers bufs, BuffersFor(*plan, call, temps_));
  WEFT_RETURN_IF_ERROR(executor_->Run(*plan->schedule, ctx, bufs));
  FinishCall(*plan, bufs, size_);
  return Status::Ok();
}

Result<std::vector<std::string>> Communicator::AllGatherStrings(const std::string& mine) {
  int64_t len = static_cast<int64_t>(mine.size());
  std::vector<int64_t> lens(size_);
  Call c;
  c.coll = Collective::kAllGather;
  c.send = &len;
  c.recv = lens.data();
  c.count = 1;
  c.dtype = DataType::kInt64;
  WEFT_RETURN_IF_ERROR(Run(c));
  size_t width = static_cast<size_t>(*std::max_element(lens.begin(), lens.end()));
  std::string padded = mine;
  padded.resize(width);
  std::vector<char> all(width * size_);
  c.send = padded.data();
  c.recv = all.data();
  c.count = width;
  c.dtype = DataType::kUint8;
  WEFT_RETURN_IF_ERROR(Run(c));
  std::vector<std::string> out(size_);
  for (int r = 0; r < size_; ++r) {
    if (lens[r] < 0 || static_cast<size_t>(lens[r]) > width)
      return Internal("allgather of strings returned a bad length");
    out[r].assign(all.data() + r * width, static_cast<size_t>(lens[r]));
  }
  return out;
}

Result<std::unique_ptr<Communicator>> Communicator::Split(int color, int key) {
  // 1. Everyone learns everyone's (color, key).
  int64_t mine[2] = {color < 0 ? -1 : color, key};
  std::vector<int64_t> all(2 * size_);
  Call c;
  c.coll = Collective::kAllGather;
  c.send = mine;
  c.recv = all.data();
  c.count = 2;
  c.dtype = DataType::kInt64;
  WEFT_RETURN_IF_ERROR(Run(c).WithContext("split"));
  uint64_t split_index;
  {
    std::lock_guard<std::mutex> lock(mu_);
    split_index = split_count_++;
  }

  // 2. The new group: same color, ordered by (key, old rank).
  std::vector<int> members;
  if (color >= 0) {
    for (int r = 0; r < size_; ++r)
      if (all[2 * r] == color) members.push_back(r);
    std::stable_sort(members.begin(), members.end(),
                     [&](int a, int b) { return all[2 * a + 1] < all[2 * b + 1]; });
  }

  // 3. The new mesh exchanges its cards over this communicator. Mesh::Connect calls the
  //    allgather exactly once, so ranks without a color take part with an empty card.
  auto gather = [this, members](const std::string& card) -> Result<std::vector<std::string>> {
    WEFT_ASSIGN_OR_RETURN(std::vector<std::string> cards, AllGatherStrings(card));
    std::vector<std::string> picked;
    for (int r : members) picked.push_back(std::move(cards[r]));
    return picked;
  };
  if (color < 0) {
    WEFT_ASSIGN_OR_RETURN(std::vector<std::string> ignored, AllGatherStrings(""));
    (void)ignored;
    return std::unique_ptr<Communicator>();
  }
  int new_rank = static_cast<int>(std::find(members.begin(), members.end(), rank_) -
                                  members.begin());
  // Same id on every member: derived from the parent's id, the split's index and color.
  uint64_t h = id_ ^ (0x9e3779b97f4a7c15ull * (split_index + 1));
  h ^= static_cast<uint64_t>(color) * 0xff51afd7ed558ccdull;
  h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 29;
  // The child shares this communicator's store connection (weftCommShrink uses it) and
  // its job key (its tcp connections authenticate with it).
  return Create(new_rank, static_cast<int>(members.size()), h, gather, bootstrap_);
}

uint64_t Communicator::NextShrinkEpoch() {
  std::lock_guard<std::mutex> lock(mu_);
  return shrink_count_++;
}

std::string Communicator::LastError() {
  std::lock_guard<std::mutex> lock(error_mu_);
  return last_error_;
}

void Communicator::SetLastError(const Status& status) {
  std::lock_guard<std::mutex> lock(error_mu_);
  last_error_ = status.ToString();
}

}  // namespace weft::comm
