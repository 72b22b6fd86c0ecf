/* weft: collective communication for training clusters.
 *
 * A stable C API in the NCCL tradition. Every function returns a weftResult_t; on
 * failure, weftGetLastError(comm) (or weftGetLastError(NULL) for calls without a
 * communicator) gives a message naming the rank, the operation and the cause.
 *
 * Threading: a communicator may be used by one thread at a time. Non-blocking calls
 * (weftI*) return a request that the caller completes with weftWait or weftTest;
 * operations on a communicator run in the order they were issued.
 *
 * Buffers are host memory. Counts are in elements of `datatype`. In-place calls follow
 * NCCL: allreduce/reduce/broadcast: sendbuff == recvbuff; allgather/gather:
 * sendbuff == recvbuff + rank*count elements; reducescatter/scatter:
 * recvbuff == sendbuff + rank*count elements.
 */
#ifndef WEFT_WEFT_H_
#define WEFT_WEFT_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define WEFT_API
#else
#define WEFT_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_MAJOR 0
#define WEFT_MINOR 1
#define WEFT_PATCH 0
#define WEFT_VERSION_CODE (WEFT_MAJOR * 10000 + WEFT_MINOR * 100 + WEFT_PATCH)

typedef enum {
  weftSuccess = 0,
  weftInvalidArgument = 1, /* bad argument or environment variable */
  weftInvalidUsage = 2,    /* ranks disagree: mismatched collectives, sizes, roots */
  weftSystemError = 3,     /* a system call failed */
  weftInternalError = 4,   /* a bug in weft */
  weftTimeout = 5,         /* a wait exceeded the timeout (WEFT_TIMEOUT, weftCommSetTimeout) */
  weftRemoteError = 6,     /* a peer or the store is gone or sent garbage */
  weftAborted = 7,         /* the communicator was aborted or failed earlier */
  weftInProgress = 8,      /* weftTest: not complete yet */
  weftNumResults = 9
} weftResult_t;

typedef enum {
  weftInt8 = 0, weftChar = 0,
  weftUint8 = 1,
  weftInt32 = 2, weftInt = 2,
  weftUint32 = 3,
  weftInt64 = 4,
  weftUint64 = 5,
  weftFloat16 = 6, weftHalf = 6,
  weftBfloat16 = 7,
  weftFloat32 = 8, weftFloat = 8,
  weftFloat64 = 9, weftDouble = 9,
  weftNumTypes = 10
} weftDataType_t;

typedef enum {
  weftSum = 0,
  weftProd = 1,
  weftMin = 2,
  weftMax = 3,
  weftAvg = 4,
  weftNumOps = 5
} weftRedOp_t;

#define WEFT_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[WEFT_UNIQUE_ID_BYTES];
} weftUniqueId;

typedef struct weftComm* weftComm_t;
typedef struct weftRequest* weftRequest_t;

/* Color for weftCommSplit: this rank joins no new communicator (*newcomm = NULL). */
#define WEFT_SPLIT_NOCOLOR (-1)

WEFT_API const char* weftGetErrorString(weftResult_t result);
/* The detailed message of the last failed call on `comm` (NULL: of this thread's last
 * failed call that had no communicator, e.g. init). Valid until the next call. */
WEFT_API const char* weftGetLastError(weftComm_t comm);
WEFT_API weftResult_t weftGetVersion(int* version);

/* --- Communicators ------------------------------------------------------------- */
/* Creates an id on one process (which then serves the rendezvous until it exits);
 * pass it to every rank out of band, then call weftCommInitRank on each. */
WEFT_API weftResult_t weftGetUniqueId(weftUniqueId* uniqueId);
/* The id of another communicator met through the same rendezvous as `base` (the store
 * `base` names, and its secret): `salt` picks which. Equal (base, salt) give equal ids
 * on every process; different salts give different communicators (a 64-bit hash of the
 * two: a collision is as unlikely as two ids from weftGetUniqueId colliding). For ranks
 * that exchanged ids once and later form a new communicator without another exchange
 * (torch's reconfigure): each generation salts the same id with a value it has not used.
 * A malformed `base` is refused (weftInvalidArgument). */
WEFT_API weftResult_t weftUniqueIdDerive(const weftUniqueId* base, uint64_t salt,
                                         weftUniqueId* derived);
WEFT_API weftResult_t weftCommInitRank(weftComm_t* comm, int nranks, weftUniqueId commId,
                                       int rank);

/* Options for weftCommInitRankConfig, in the shape of NCCL's ncclConfig_t. Always start
 * from WEFT_CONFIG_INITIALIZER, then set the fields wanted: `size`, `magic` and `version`
 * let the library check that the caller was compiled against a layout it knows.
 *   timeout_ms: bounds every wait of this communicator (init included) as WEFT_TIMEOUT
 *     does, in milliseconds; 0 (the initializer's): WEFT_TIMEOUT, else its default of
 *     300 s. A value set here wins over WEFT_TIMEOUT. weftCommSetTimeout changes it later.
 *   blocking: 1 (the initializer's). Non-blocking communicators (0 in NCCL: calls that
 *     return weftInProgress) are not supported and are refused.
 *   name: a label for this communicator, shown in its log lines, its error messages and
 *     its flight-recorder dumps; NULL or "" for none. Copied at init; at most
 *     WEFT_COMM_NAME_MAX - 1 bytes.
 * Errors (weftInvalidArgument, with the field and value in weftGetLastError(NULL)): a
 * size or magic that is not this struct's, a newer version than the library's, a
 * negative timeout_ms, blocking other than 1, a name too long. */
#define WEFT_CONFIG_MAGIC 0x77656674u /* "weft" */
#define WEFT_COMM_NAME_MAX 128
typedef struct {
  size_t size;          /* sizeof(weftConfig_t) */
  unsigned int magic;   /* WEFT_CONFIG_MAGIC */
  unsigned int version; /* WEFT_VERSION_CODE of the header compiled against */
  int64_t timeout_ms;
  int blocking;
  const char* name;
} weftConfig_t;
#define WEFT_CONFIG_INITIALIZER \
  { sizeof(weftConfig_t), WEFT_CONFIG_MAGIC, WEFT_VERSION_CODE, 0, 1, NULL }

/* weftCommInitRank with options; config NULL: the defaults (as WEFT_CONFIG_INITIALIZER).
 * The config is read during the call only. */
WEFT_API weftResult_t weftCommInitRankConfig(weftComm_t* comm, int nranks, weftUniqueId commId,
                                             int rank, const weftConfig_t* config);
/* Rank, size and rendezvous from the launcher's environment: weftrun, torchrun, Slurm,
 * Open MPI (see docs/CONFIGURATION.md). */
WEFT_API weftResult_t weftCommInitFromEnv(weftComm_t* comm);
/* Collective over `comm`: ranks with the same color form a new communicator, ordered
 * by (key, old rank). It starts with `comm`'s current timeout and no name. */
WEFT_API weftResult_t weftCommSplit(weftComm_t comm, int color, int key, weftComm_t* newcomm);
/* weftCommSplit with options for the new communicator (NCCL's ncclCommSplit config):
 * its timeout_ms (0: `comm`'s current timeout) and name; config NULL: as weftCommSplit.
 * A refused config (as weftCommInitRankConfig's) fails on this rank before the
 * collective starts: every rank should pass a valid one, or the others wait for it until
 * their timeout. */
WEFT_API weftResult_t weftCommSplitConfig(weftComm_t comm, int color, int key,
                                          weftComm_t* newcomm, const weftConfig_t* config);
/* A new communicator of the ranks of `comm` that remain, numbered in their old order
 * (NCCL 2.19's ncclCommShrink, without the config). Works on a healthy communicator and,
 * the point of it, on one that failed (a rank died): the survivors agree on who remains
 * through the rendezvous store, not over `comm`'s links. Every remaining rank calls it;
 * ranks in excludeRanks must not (they get weftInvalidUsage).
 *   excludeRanks/nExclude: ranks of `comm` to leave out; nExclude == 0 (excludeRanks may
 *     be NULL): leave out the ranks the survivors' errors name as lost, and any rank that
 *     does not call within WEFT_TIMEOUT.
 *   flags: WEFT_SHRINK_DEFAULT, or WEFT_SHRINK_ABORT to abort `comm`'s calls in flight
 *     first (as weftCommAbort, but `comm` stays allocated: destroy it afterwards).
 * Errors: weftInvalidArgument for a rank out of range or listed twice, or all ranks
 * excluded; weftInvalidUsage on a rank that is excluded (listed, or left out by the
 * agreement); weftRemoteError / weftTimeout when the store is gone (the process hosting
 * it died) or a survivor does not connect. Bounded by 2 x WEFT_TIMEOUT. `comm` is left
 * as it was (still usable if it was healthy). The new communicator keeps `comm`'s name and
 * current timeout. docs/RELIABILITY.md has the details. */
#define WEFT_SHRINK_DEFAULT 0x00
#define WEFT_SHRINK_ABORT 0x01
WEFT_API weftResult_t weftCommShrink(weftComm_t comm, const int* excludeRanks, int nExclude,
                                     weftComm_t* newcomm, int flags);
WEFT_API weftResult_t weftCommDestroy(weftComm_t comm);
/* Abandons `comm` and frees it; callable from any thread, also while other threads are
 * blocked in calls on `comm` (they, and every pending request, return weftAborted within
 * about 100 ms). Never waits on a peer: peers are told the cause and their calls fail
 * with an error naming this rank. Requests of `comm` must still be completed with
 * weftWait or weftTest (their error text is also in weftGetLastError(NULL)). */
WEFT_API weftResult_t weftCommAbort(weftComm_t comm);
/* The timeout of the calls issued on `comm` from now on, in milliseconds (> 0): each call
 * takes the value in effect when it is issued, so calls already issued or queued keep
 * theirs. Every wait of the call (blocking, weftWait, the stream calls' host side) is
 * bounded by it, counted from when the call starts running, as WEFT_TIMEOUT. Callable
 * from any thread (it does not wait for calls in flight). weftCommShrink's store
 * agreement stays bounded by WEFT_TIMEOUT. Errors: weftInvalidArgument for 0. */
WEFT_API weftResult_t weftCommSetTimeout(weftComm_t comm, uint64_t timeout_ms);
/* The timeout weftCommSetTimeout set last, else the one from init (config or
 * WEFT_TIMEOUT), in milliseconds. */
WEFT_API weftResult_t weftCommGetTimeout(const weftComm_t comm, uint64_t* timeout_ms);
/* The timeout a communicator gets when its config sets none: WEFT_TIMEOUT, else 300 s,
 * in milliseconds. weftInvalidArgument if WEFT_TIMEOUT is malformed. */
WEFT_API weftResult_t weftGetDefaultTimeout(uint64_t* timeout_ms);
WEFT_API weftResult_t weftCommCount(const weftComm_t comm, int* count);
WEFT_API weftResult_t weftCommUserRank(const weftComm_t comm, int* rank);
/* The name of the algorithm this rank ran for its most recently started collective on
 * `comm` (as WEFT_ALGO spells it: "ring", "recursive_doubling", ...), or "" before the
 * first. The string is static. For benchmarks and tools that report what the planner
 * chose; point-to-point calls leave it unchanged. */
WEFT_API weftResult_t weftCommGetLastAlgorithm(const weftComm_t comm, const char** name);

/* Shared buffers (docs/TRANSPORTS.md, "Registered buffers"). weftMemAlloc returns `size`
 * zero-filled bytes that the other processes of this host can map: a sealed memfd (mode
 * 0600, F_SEAL_SHRINK so no process can shrink it under another's mapping). weftMemFree
 * frees it. Errors: weftInvalidArgument for size 0, a NULL pointer, a pointer weftMemAlloc
 * did not return, or one already freed; weftSystemError when the kernel refuses. */
WEFT_API weftResult_t weftMemAlloc(void** ptr, size_t size);
WEFT_API weftResult_t weftMemFree(void* ptr);
/* Registers [buff, buff + size) with `comm` (NCCL's ncclCommRegister): host memory
 * inside a weftMemAlloc buffer. Optional for such memory: a collective on a single-host
 * communicator whose buffers all come from weftMemAlloc, on every rank, runs in a single
 * pass through the peers' buffers whether they are registered or not (docs/TRANSPORTS.md,
 * "Registered buffers"). The handle names the registration until
 * weftCommDeregister (or weftCommDestroy) releases it; it does not free the memory.
 * Errors: weftInvalidArgument for a NULL buffer or handle pointer, size 0, memory not
 * from weftMemAlloc, a range that overlaps one already registered on `comm`, or (at
 * deregistration) a handle not registered on `comm`. */
WEFT_API weftResult_t weftCommRegister(const weftComm_t comm, void* buff, size_t size,
                                       void** handle);
WEFT_API weftResult_t weftCommDeregister(const weftComm_t comm, void* handle);

/* One-sided windows on one host (docs/TRANSPORTS.md, "Windows"; torch's new_window).
 * weftWinCreate is collective: every rank of `comm` gives a range of a weftMemAlloc
 * buffer (ranges may differ in size; size 0: this rank exposes nothing, buff ignored),
 * and each rank maps every other's, so peers read and write it directly. Every rank
 * gets the same result: a bad range on any rank, ranks on different hosts
 * (weftInvalidUsage), or a rank that cannot map the others fail them all, naming the
 * rank and the cause (in weftGetLastError(comm)). After creation a window does not use
 * `comm`: it may outlive it, and its calls report errors in weftGetLastError(NULL).
 *   weftWinFree: unmaps the peers' ranges here (the buffers stay the callers'). Local;
 *     call weftBarrier first where peers may still put or signal (a late put to a freed
 *     window lands in memory nobody reads: no fault, no corruption elsewhere).
 *   weftWinPeerPtr: where rank's range is mapped here, and its size.
 *   weftWinPut: copies `bytes` from `src` to `offset` in `peer`'s range (blocking: done
 *     on return); a range past its end is weftInvalidArgument.
 *   weftWinSignal: tells `peer` that this rank's puts to it so far are done.
 *   weftWinWaitSignal: waits for `peer`'s next signal to this rank (each wait takes
 *     one); what `peer` put before that signal is then visible here. Bounded by
 *     timeout_ms (0: the communicator's timeout when the window was created):
 *     weftTimeout; weftRemoteError when the peer's process is gone. */
typedef struct weftWindow* weftWindow_t;
WEFT_API weftResult_t weftWinCreate(weftComm_t comm, void* buff, size_t size, weftWindow_t* win);
WEFT_API weftResult_t weftWinFree(weftWindow_t win);
WEFT_API weftResult_t weftWinPeerPtr(weftWindow_t win, int rank, void** ptr, size_t* size);
WEFT_API weftResult_t weftWinPut(weftWindow_t win, const void* src, size_t bytes, int peer,
                                 size_t offset);
WEFT_API weftResult_t weftWinSignal(weftWindow_t win, int peer);
WEFT_API weftResult_t weftWinWaitSignal(weftWindow_t win, int peer, uint64_t timeout_ms);

/* --- Collectives (blocking) --------------------------------------------------- */
WEFT_API weftResult_t weftAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                    weftDataType_t datatype, weftRedOp_t op, weftComm_t comm);
WEFT_API weftResult_t weftReduce(const void* sendbuff, void* recvbuff, size_t count,
                                 weftDataType_t datatype, weftRedOp_t op, int root,
                                 weftComm_t comm);
WEFT_API weftResult_t weftBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                    weftDataType_t datatype, int root, weftComm_t comm);
WEFT_API weftResult_t weftAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                    weftDataType_t datatype, weftComm_t comm);
WEFT_API weftResult_t weftReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                        weftDataType_t datatype, weftRedOp_t op,
                                        weftComm_t comm);
/* `count` elements go to each peer: sendbuff and recvbuff hold nranks*count. */
WEFT_API weftResult_t weftAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                                   weftDataType_t datatype, weftComm_t comm);
/* recvbuff (nranks*sendcount) matters at the root only. */
WEFT_API weftResult_t weftGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                 weftDataType_t datatype, int root, weftComm_t comm);
/* sendbuff (nranks*recvcount) matters at the root only. */
WEFT_API weftResult_t weftScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                  weftDataType_t datatype, int root, weftComm_t comm);
WEFT_API weftResult_t weftBarrier(weftComm_t comm);
WEFT_API weftResult_t weftSend(const void* sendbuff, size_t count, weftDataType_t datatype,
                               int peer, weftComm_t comm);
WEFT_API weftResult_t weftRecv(void* recvbuff, size_t count, weftDataType_t datatype, int peer,
                               weftComm_t comm);

/* --- Collectives (non-blocking) ------------------------------------------------
 * Each returns at once with *request set; buffers must stay valid and untouched until
 * the request completes. */
WEFT_API weftResult_t weftIAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                     weftDataType_t datatype, weftRedOp_t op, weftComm_t comm,
                                     weftRequest_t* request);
WEFT_API weftResult_t weftIReduce(const void* sendbuff, void* recvbuff, size_t count,
                                  weftDataType_t datatype, weftRedOp_t op, int root,
                                  weftComm_t comm, weftRequest_t* request);
WEFT_API weftResult_t weftIBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                     weftDataType_t datatype, int root, weftComm_t comm,
                                     weftRequest_t* request);
WEFT_API weftResult_t weftIAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                     weftDataType_t datatype, weftComm_t comm,
                                     weftRequest_t* request);
WEFT_API weftResult_t weftIReduceScatter(const void* sendbuff, void* recvbuff,
                                         size_t recvcount, weftDataType_t datatype,
                                         weftRedOp_t op, weftComm_t comm,
                                         weftRequest_t* request);
WEFT_API weftResult_t weftIAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                                    weftDataType_t datatype, weftComm_t comm,
                                    weftRequest_t* request);
WEFT_API weftResult_t weftIGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                  weftDataType_t datatype, int root, weftComm_t comm,
                                  weftRequest_t* request);
WEFT_API weftResult_t weftIScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                   weftDataType_t datatype, int root, weftComm_t comm,
                                   weftRequest_t* request);
WEFT_API weftResult_t weftIBarrier(weftComm_t comm, weftRequest_t* request);
WEFT_API weftResult_t weftISend(const void* sendbuff, size_t count, weftDataType_t datatype,
                                int peer, weftComm_t comm, weftRequest_t* request);
WEFT_API weftResult_t weftIRecv(void* recvbuff, size_t count, weftDataType_t datatype, int peer,
                                weftComm_t comm, weftRequest_t* request);

/* Blocks until the request completes (bounded by the call's timeout), frees it, and returns
 * the operation's result. */
WEFT_API weftResult_t weftWait(weftRequest_t request);
/* *done = 1 and the request is freed (returning the operation's result) when complete;
 * otherwise *done = 0 and weftSuccess. */
WEFT_API weftResult_t weftTest(weftRequest_t request, int* done);

/* --- Group calls (NCCL's ncclGroupStart/End) ----------------------------------------
 * Between weftGroupStart and weftGroupEnd on one thread, the blocking collectives, sends
 * and receives and the stream calls (on any communicators) are checked and return at
 * once; the outermost weftGroupEnd issues them, in the order they were made, and returns
 * when all of them have completed. So a rank can post sends and receives in any order
 * without deadlocking on a peer that does the same; they progress together. Their
 * buffers are the library's until weftGroupEnd returns. Groups nest. A call with a bad
 * argument returns its error at once; one that fails later is reported by weftGroupEnd
 * (the first such error, for weftGetLastError on its communicator and on NULL), after it
 * has waited for the others.
 * On a stream, as in NCCL, a group's calls are put on the stream by weftGroupEnd (work
 * queued on the stream before that runs before them) and share one place there: the
 * stream waits once for all of them, so that sends and receives between two ranks that
 * both send first complete. With WEFT_CUDA_STREAM_WAIT=memop weftGroupEnd returns once
 * they are ordered on their streams. The weftI* calls are issued at once, inside a group
 * or not. weftGroupEnd without weftGroupStart: weftInvalidUsage. */
WEFT_API weftResult_t weftGroupStart(void);
WEFT_API weftResult_t weftGroupEnd(void);
/* Ends the outermost group without running its calls (NCCL's ncclGroupSimulateEnd): their
 * buffers are neither read nor written, and *estimated_us is set to the time weft's cost
 * model gives them: for each collective, the algorithm the planner would choose and its
 * estimate under the communicator's link figures (WEFT_COST_MODEL, else those detected at
 * init), one after another; the sends and receives of a communicator as one step of all
 * their messages; summed over communicators. Host buffers are modelled (the GPU direct
 * path is not); a receive from any source cannot be estimated (weftInvalidArgument).
 * Inside a nested group: weftInvalidUsage, and the inner group's calls stay for the outer
 * one. Local: no rank talks to another. docs/SIMULATOR.md. */
WEFT_API weftResult_t weftGroupSimulateEnd(double* estimated_us);

/* --- CUDA streams (docs/GPU.md) ----------------------------------------------------
 * NCCL semantics: buffers may be CUDA device memory; the call returns once the operation
 * is ordered on `stream` (work queued on the stream afterwards waits for it) and runs in
 * the background. A NULL stream is the legacy default stream. With host buffers and a
 * NULL stream these behave as the blocking calls. All ranks use device buffers or all
 * host buffers in one call. Errors found after a call returned fail the communicator:
 * weftCommGetAsyncError reports them and later calls return weftAborted.
 * The blocking and weftI* calls above also accept device buffers (ordered on the
 * default stream; the blocking ones return when the result is in the buffer).
 * Built without CUDA, or on a machine without a usable GPU, a non-NULL stream gives
 * weftInvalidArgument with the reason. */
typedef struct CUstream_st* weftStream_t; /* the same type as cudaStream_t */

WEFT_API weftResult_t weftAllReduceStream(const void* sendbuff, void* recvbuff, size_t count,
                                          weftDataType_t datatype, weftRedOp_t op,
                                          weftComm_t comm, weftStream_t stream);
WEFT_API weftResult_t weftReduceStream(const void* sendbuff, void* recvbuff, size_t count,
                                       weftDataType_t datatype, weftRedOp_t op, int root,
                                       weftComm_t comm, weftStream_t stream);
WEFT_API weftResult_t weftBroadcastStream(const void* sendbuff, void* recvbuff, size_t count,
                                          weftDataType_t datatype, int root, weftComm_t comm,
                                          weftStream_t stream);
WEFT_API weftResult_t weftAllGatherStream(const void* sendbuff, void* recvbuff,
                                          size_t sendcount, weftDataType_t datatype,
                                          weftComm_t comm, weftStream_t stream);
WEFT_API weftResult_t weftReduceScatterStream(const void* sendbuff, void* recvbuff,
                                              size_t recvcount, weftDataType_t datatype,
                                              weftRedOp_t op, weftComm_t comm,
                                              weftStream_t stream);
WEFT_API weftResult_t weftAllToAllStream(const void* sendbuff, void* recvbuff, size_t count,
                                         weftDataType_t datatype, weftComm_t comm,
                                         weftStream_t stream);
WEFT_API weftResult_t weftGatherStream(const void* sendbuff, void* recvbuff, size_t sendcount,
                                       weftDataType_t datatype, int root, weftComm_t comm,
                                       weftStream_t stream);
WEFT_API weftResult_t weftScatterStream(const void* sendbuff, void* recvbuff, size_t recvcount,
                                        weftDataType_t datatype, int root, weftComm_t comm,
                                        weftStream_t stream);
WEFT_API weftResult_t weftBarrierStream(weftComm_t comm, weftStream_t stream);
WEFT_API weftResult_t weftSendStream(const void* sendbuff, size_t count,
                                     weftDataType_t datatype, int peer, weftComm_t comm,
                                     weftStream_t stream);
WEFT_API weftResult_t weftRecvStream(void* recvbuff, size_t count, weftDataType_t datatype,
                                     int peer, weftComm_t comm, weftStream_t stream);

/* --- Tagged point-to-point -------------------------------------------------------
 * As weftSend, weftRecv, weftISend, weftIRecv, weftSendStream and weftRecvStream (which
 * send and expect tag 0), with a tag that the send carries and the receive names. Any int
 * is a tag. Over shm and tcp with one rail, a receive takes the first message from its
 * peer that carries its tag, as in MPI and Gloo: messages with one tag arrive in the
 * order sent, and those with another wait, held by weft (up to 64 MiB in all; beyond
 * that in the link), for the receive that names them. A receive whose tag never comes
 * ends at the timeout (weftTimeout), naming the messages that came instead. Over ofi
 * and links striped over several rails, a pair's messages are taken in the order sent,
 * as NCCL does: a receive whose tag is not the next message's fails the communicator
 * with weftInvalidUsage on both ranks, naming both tags. */
WEFT_API weftResult_t weftSendTagged(const void* sendbuff, size_t count, weftDataType_t datatype,
                                     int peer, int tag, weftComm_t comm);
WEFT_API weftResult_t weftRecvTagged(void* recvbuff, size_t count, weftDataType_t datatype,
                                     int peer, int tag, weftComm_t comm);
WEFT_API weftResult_t weftISendTagged(const void* sendbuff, size_t count, weftDataType_t datatype,
                                      int peer, int tag, weftComm_t comm, weftRequest_t* request);
WEFT_API weftResult_t weftIRecvTagged(void* recvbuff, size_t count, weftDataType_t datatype,
                                      int peer, int tag, weftComm_t comm, weftRequest_t* request);
WEFT_API weftResult_t weftSendStreamTagged(const void* sendbuff, size_t count,
                                           weftDataType_t datatype, int peer, int tag,
                                           weftComm_t comm, weftStream_t stream);
WEFT_API weftResult_t weftRecvStreamTagged(void* recvbuff, size_t count, weftDataType_t datatype,
                                           int peer, int tag, weftComm_t comm, weftStream_t stream);

/* --- Receives from any source ------------------------------------------------------
 * As weftRecvTagged / weftIRecvTagged, from whichever peer's message to this rank
 * with the receive's tag arrives first (0: untagged sends); *source is set to that peer
 * when the call completes (weftRecvAny returns, weftWait or weftTest report it done). A
 * message goes to the first receive posted that can take it, as in MPI. Host buffers
 * only, and links that can look at a message before taking it: shm, and tcp with one
 * rail (otherwise weftInvalidArgument, naming the link). */
WEFT_API weftResult_t weftRecvAny(void* recvbuff, size_t count, weftDataType_t datatype, int tag,
                                  int* source, weftComm_t comm);
WEFT_API weftResult_t weftIRecvAny(void* recvbuff, size_t count, weftDataType_t datatype, int tag,
                                   int* source, weftComm_t comm, weftRequest_t* request);

/* weftSuccess while the communicator is healthy; otherwise the error that failed it
 * (its message via weftGetLastError). Never blocks. */
WEFT_API weftResult_t weftCommGetAsyncError(weftComm_t comm, weftResult_t* asyncError);
/* 1 when this build and machine can use CUDA device buffers, else 0 (reason below). */
WEFT_API int weftCudaAvailable(void);
/* Why weftCudaAvailable() is 0 ("" when it is 1). */
WEFT_API const char* weftCudaUnavailableReason(void);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* WEFT_WEFT_H_ */
