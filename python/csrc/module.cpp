// The Python module weft._C: the factory torch.distributed calls for backend "weft".
#include <pybind11/chrono.h>
#include <torch/python.h>

#include "backend.h"
#include "cuda_path.h"
#include "process_group.h"
#include "shared_memory.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "weft collectives as a torch.distributed backend (see weft.torch)";
  // The GIL is released: creation is a rendezvous with the other ranks and can block.
  m.def("create_backend", &weft_torch::CreateWeftBackend, pybind11::arg("store"),
        pybind11::arg("rank"), pybind11::arg("size"), pybind11::arg("timeout"),
        pybind11::arg("name") = std::string(), pybind11::arg("enable_reconfigure") = false,
        pybind11::call_guard<pybind11::gil_scoped_release>());
  // The group weft.torch's creator returns when the group runs on weft alone
  // (process_group.h): torch's ProcessGroup, named "weft".
  m.def("weft_process_group", &weft_torch::WeftProcessGroup, pybind11::arg("like"),
        pybind11::arg("rank"), pybind11::arg("size"), pybind11::arg("backend"),
        pybind11::arg("devices"));
  m.def("library_version", [] {
    int v = 0;
    weftGetVersion(&v);
    return v;
  });
  // (compiled with CUDA support, why not: "" when it was); weft.torch.cuda_support().
  m.def("cuda_support", [] {
    return std::make_tuple(weft_torch::CudaBuilt(), std::string(weft_torch::CudaMissingReason()));
  });
  // weft.torch.empty's allocation (shared_memory.h).
  m.def("empty_shared", &weft_torch::EmptyShared, pybind11::arg("sizes"),
        pybind11::arg("dtype"));
  // weft.torch.use_shared_memory / use_default_memory (shared_memory.h).
  m.def("use_shared_cpu_allocator", &weft_torch::UseSharedCpuAllocator,
        pybind11::arg("min_bytes"));
  m.def("use_default_cpu_allocator", &weft_torch::UseDefaultCpuAllocator);
  m.def("shared_cpu_allocator_min_bytes", &weft_torch::SharedCpuAllocatorMinBytes);
  // (libweft can use CUDA device buffers on this machine, why not), weftCudaAvailable().
  m.def("libweft_cuda_available", [] {
    return std::make_tuple(weftCudaAvailable() != 0, std::string(weftCudaUnavailableReason()));
  });
}
