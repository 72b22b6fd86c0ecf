// libfabric, opened with dlopen the first time a communicator uses the ofi transport;
// libweft never links it.
//
// Why: Debian's libfabric.so.1 depends on libpsm_infinipath, whose load-time constructor
// installs handlers for SIGINT, SIGTERM, SIGSEGV, SIGBUS, SIGILL and SIGABRT. Linked into
// libweft, that would happen in every process that loads weft, ofi or not (Python's Ctrl-C
// handler replaced, a launcher's ignored SIGTERM turned fatal). Loaded here, only a process
// that asks for WEFT_TRANSPORT=ofi loads it, and IPATH_NO_BACKTRACE=1, set first unless the
// user set it, keeps those handlers out of that process as well.
//
// Only a handful of libfabric's functions are exported symbols; the rest of the API
// (fi_domain, fi_tsend, fi_cq_read, fi_close, ...) are static inline functions in its
// headers that call through the ops tables of the objects these return, so the headers are
// all the build needs.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <string>

#include "core/status.h"

namespace weft::transport::ofi {

// The exported functions weft calls, resolved from one loaded copy of libfabric.
struct FabricLib {
  std::string path;  // as given to dlopen
  uint32_t (*version)() = nullptr;
  int (*getinfo)(uint32_t version, const char* node, const char* service, uint64_t flags,
                 const fi_info* hints, fi_info** info) = nullptr;
  void (*freeinfo)(fi_info* info) = nullptr;
  fi_info* (*dupinfo)(const fi_info* info) = nullptr;  // dupinfo(nullptr) is fi_allocinfo
  int (*fabric)(fi_fabric_attr* attr, fid_fabric** fabric, void* context) = nullptr;
  const char* (*strerror)(int errnum) = nullptr;
};

// The library dlopen is given: WEFT_OFI_LIBRARY when set, otherwise "libfabric.so.1"
// (found the usual way: LD_LIBRARY_PATH, the ld.so cache).
std::string FabricLibPath();

// Loads libfabric once per process and returns it; later calls return the same one. A
// failure is not remembered (a later call tries again, e.g. after WEFT_OFI_LIBRARY
// changed). A SystemError naming the path, dlerror() and what to install when the
// library or one of its symbols is missing, or when it is older than 1.10. Thread-safe. The library is never unloaded: providers keep
// threads and handlers that cannot be torn down safely.
Result<const FabricLib*> LoadFabricLib();

// Opens `path` and resolves the symbols, without touching the process-wide copy (tests).
Result<FabricLib> OpenFabricLib(const std::string& path);

// The loaded library. Precondition: LoadFabricLib() has succeeded (every OfiEndpoint
// exists only after it did).
const FabricLib& Fabric();

// libfabric's error `ret` (negative or not) after `what`, for messages:
// "fi_tsend: Resource temporarily unavailable (-11)". Needs the loaded library (Fabric).
std::string FiError(const char* what, int ret);

}  // namespace weft::transport::ofi
