#include "transport/ofi/fabric_lib.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <cstdlib>

#include "core/env.h"
#include "core/log.h"
#include "core/mutex.h"

namespace weft::transport::ofi {
namespace {

// The oldest libfabric the transport is written against (FI_VERSION(1, 10) in its hints).
constexpr uint32_t kMinMajor = 1;
constexpr uint32_t kMinMinor = 10;

Status LoadError(const std::string& path, const std::string& why) {
  return Status(
      Code::kSystemError,
      fmt::format("the ofi transport (WEFT_TRANSPORT=ofi or shm+ofi) needs libfabric, but "
                  "loading '{}' failed: {} (install libfabric1, or set "
                  "WEFT_OFI_LIBRARY to the path of libfabric.so.1)",
                  path, why));
}

template <typename Fn>
Status Resolve(void* handle, const std::string& path, const char* name, Fn* fn) {
  dlerror();  // clear a stale error
  void* sym = dlsym(handle, name);
  if (sym == nullptr) {
    const char* err = dlerror();
    return LoadError(path, err ? err : fmt::format("no symbol {}", name));
  }
  *fn = reinterpret_cast<Fn>(sym);
  return Status::Ok();
}

Mutex g_mu;
std::atomic<const FabricLib*> g_lib{nullptr};  // set once, never freed (see the header)

}  // namespace

std::string FabricLibPath() {
  std::optional<std::string> v = GetEnv("WEFT_OFI_LIBRARY");
  return v && !v->empty() ? *v : "libfabric.so.1";
}

Result<FabricLib> OpenFabricLib(const std::string& path) {
  // libinfinipath's constructor runs inside dlopen; this variable makes it leave the
  // process's signal handlers alone. The user's own setting wins (overwrite = 0).
  SetEnvIfUnset("IPATH_NO_BACKTRACE", "1");
  // RTLD_LOCAL: libfabric's symbols stay out of the global namespace, so a program that
  // links its own libfabric (say, an MPI) keeps resolving to its copy.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return LoadError(path, err ? err : "dlopen failed");
  }
  FabricLib lib;
  lib.path = path;
  Status st = Resolve(handle, path, "fi_version", &lib.version);
  if (st.ok()) st = Resolve(handle, path, "fi_getinfo", &lib.getinfo);
  if (st.ok()) st = Resolve(handle, path, "fi_freeinfo", &lib.freeinfo);
  if (st.ok()) st = Resolve(handle, path, "fi_dupinfo", &lib.dupinfo);
  if (st.ok()) st = Resolve(handle, path, "fi_fabric", &lib.fabric);
  if (st.ok()) st = Resolve(handle, path, "fi_strerror", &lib.strerror);
  if (st.ok()) {
    uint32_t v = lib.version();
    if (FI_MAJOR(v) < kMinMajor || (FI_MAJOR(v) == kMinMajor && FI_MINOR(v) < kMinMinor))
      st = LoadError(path, fmt::format("it is version {}.{}, weft needs {}.{} or newer",
                                       FI_MAJOR(v), FI_MINOR(v), kMinMajor, kMinMinor));
  }
  if (!st.ok()) {
    dlclose(handle);
    return st;
  }
  return lib;
}

Result<const FabricLib*> LoadFabricLib() {
  MutexLock lock(&g_mu);
  if (const FabricLib* lib = g_lib.load()) return lib;
  WEFT_ASSIGN_OR_RETURN(FabricLib lib, OpenFabricLib(FabricLibPath()));
  uint32_t v = lib.version();
  WEFT_INFO("ofi: loaded libfabric {}.{} from {}", FI_MAJOR(v), FI_MINOR(v), lib.path);
  const FabricLib* loaded = new FabricLib(std::move(lib));
  g_lib.store(loaded);
  return loaded;
}

const FabricLib& Fabric() { return *g_lib.load(); }

std::string FiError(const char* what, int ret) {
  return fmt::format("{}: {} ({})", what, Fabric().strerror(ret < 0 ? -ret : ret), ret);
}

}  // namespace weft::transport::ofi
