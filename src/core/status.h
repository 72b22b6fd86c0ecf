// Errors as values. A Status is a canonical code plus a human message that names
// the rank, the operation and the cause; Result<T> carries either a value or a
// Status. Exceptions are not used inside the library.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <variant>

namespace weft {

enum class Code {
  kOk = 0,
  kInvalidArgument,   // bad input from the caller or the environment
  kInvalidUsage,      // ranks disagree (mismatched collectives, sizes, ...)
  kDeadlineExceeded,  // a bounded wait ran out (WEFT_TIMEOUT)
  kUnavailable,       // a peer or the store is gone (closed socket, dead process)
  kAborted,           // the communicator was aborted or is in a failed state
  kSystemError,       // a syscall failed for a local reason
  kProtocolError,     // bytes from the wire that are not what the protocol allows
  kInternal,          // a bug in weft
};

const char* CodeName(Code code);

// The message lives on the heap, and an ok Status holds none: every call passes several
// Statuses up its stack, and an ok one then costs a word to make, move and destroy
// instead of a std::string's (about a tenth of a small call's instructions here).
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message)
      : code_(code),
        message_(code == Code::kOk && message.empty()
                     ? nullptr
                     : std::make_unique<std::string>(std::move(message))) {}
  Status(const Status& other)
      : code_(other.code_),
        message_(other.message_ ? std::make_unique<std::string>(*other.message_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) return *this = Status(other);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const;
  // "DeadlineExceeded: <message>"
  std::string ToString() const;
  // Returns a copy whose message is prefixed with `context` + ": ".
  Status WithContext(const std::string& context) const;

 private:
  Code code_ = Code::kOk;
  std::unique_ptr<std::string> message_;  // null: empty
};

inline Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
inline Status InvalidUsage(std::string m) { return {Code::kInvalidUsage, std::move(m)}; }
inline Status DeadlineExceeded(std::string m) { return {Code::kDeadlineExceeded, std::move(m)}; }
inline Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
inline Status Aborted(std::string m) { return {Code::kAborted, std::move(m)}; }
inline Status ProtocolError(std::string m) { return {Code::kProtocolError, std::move(m)}; }
inline Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
// A SystemError status from errno: "<what>: <strerror(err)>".
Status ErrnoStatus(const std::string& what, int err);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}            // NOLINT(implicit)
  Result(Status status) : v_(std::move(status)) {}     // NOLINT(implicit); must not be ok
  bool ok() const { return v_.index() == 0; }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<1>(v_);
  }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace weft

#define WEFT_CONCAT_INNER_(a, b) a##b
#define WEFT_CONCAT_(a, b) WEFT_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (a Status) is not ok.
#define WEFT_RETURN_IF_ERROR(expr)                 \
  do {                                             \
    ::weft::Status weft_status_ = (expr);          \
    if (!weft_status_.ok()) return weft_status_;   \
  } while (0)

// `lhs = value of expr` (a Result<T>), or return its Status.
#define WEFT_ASSIGN_OR_RETURN(lhs, expr)                                  \
  auto WEFT_CONCAT_(weft_result_, __LINE__) = (expr);                     \
  if (!WEFT_CONCAT_(weft_result_, __LINE__).ok())                         \
    return WEFT_CONCAT_(weft_result_, __LINE__).status();                 \
  lhs = std::move(WEFT_CONCAT_(weft_result_, __LINE__)).value()
