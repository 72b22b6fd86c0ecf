#include "rank_process.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

extern char** environ;

namespace weftrun {
namespace {

// Everything below runs between fork and exec in a process that may have other threads
// (the store server), so it may only use async-signal-safe calls: no malloc, no stdio.
[[noreturn]] void ExecChild(const char* path, char* const* argv, char* const* envp,
                            int out_w, int err_w, int null_fd, pid_t parent) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // weftrun blocks signals for its signalfd
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD}) signal(sig, SIG_DFL);
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // weftrun died before prctl took effect
  dup2(null_fd, STDIN_FILENO);
  dup2(out_w, STDOUT_FILENO);
  dup2(err_w, STDERR_FILENO);
  // Nothing else of weftrun's (store sockets, other ranks' pipes) leaks into the rank.
  syscall(SYS_close_range, 3u, ~0u, 0u);
  execve(path, argv, envp);
  int err = errno;
  const char msg[] = "weftrun: exec failed: ";
  (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
  (void)!write(STDERR_FILENO, path, strlen(path));
  const char* reason = err == ENOENT ? " (no such file)\n"
                       : err == EACCES ? " (permission denied)\n"
                                       : " (see errno)\n";
  (void)!write(STDERR_FILENO, reason, strlen(reason));
  _exit(127);
}

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

bool IsExecutableFile(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

}  // namespace

weft::Result<RankProcess> SpawnRank(const SpawnSpec& spec) {
  int out_p[2], err_p[2];
  if (::pipe2(out_p, O_CLOEXEC) != 0) return weft::ErrnoStatus("pipe2", errno);
  weft::net::Fd out_r(out_p[0]), out_w(out_p[1]);
  if (::pipe2(err_p, O_CLOEXEC) != 0) return weft::ErrnoStatus("pipe2", errno);
  weft::net::Fd err_r(err_p[0]), err_w(err_p[1]);
  weft::net::Fd null_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!null_fd.valid()) return weft::ErrnoStatus("open /dev/null", errno);

  auto argv = CStrings(spec.argv);
  auto envp = CStrings(spec.env);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return weft::ErrnoStatus("fork", errno);
  if (pid == 0) {
    ExecChild(spec.path.c_str(), argv.data(), envp.data(), out_w.get(), err_w.get(),
              null_fd.get(), parent);
  }
  // Also from the parent, so the group exists before we might signal it (whichever of
  // the two setpgid calls runs first wins; the other is harmless).
  ::setpgid(pid, pid);
  RankProcess rp;
  rp.pid = pid;
  rp.out = std::move(out_r);
  rp.err = std::move(err_r);
  return rp;
}

std::optional<std::string> ResolveProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    if (IsExecutableFile(name)) return name;
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string cand = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (IsExecutableFile(cand)) return cand;
    start = end + 1;
  }
  return std::nullopt;
}

std::vector<std::string> MergeEnvironment(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  // A map keeps one value per name; overrides replace inherited values.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq == nullptr) continue;
    env[std::string(*e, static_cast<size_t>(eq - *e))] = eq + 1;
  }
  for (const auto& [k, v] : overrides) env[k] = v;
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace weftrun
