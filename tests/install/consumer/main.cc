// C++ RAII layer against the installed static library.
#include <cstdio>
#include <vector>

#include <weft/weft.hpp>

int main() {
  weft::Comm comm = weft::Comm::FromUniqueId(1, weft::Comm::NewUniqueId(), 0);
  std::vector<int> v = {4, 5, 6}, out(3);
  comm.allreduce(v.data(), out.data(), v.size(), weftMax);
  std::printf("consumer_cpp: rank %d of %d: %d %d %d\n", comm.rank(), comm.size(), out[0],
              out[1], out[2]);
  if (out != v) return 1;
  comm.abort();  // weftCommAbort: frees the communicator; the Comm is empty afterwards
  return comm.get() == nullptr ? 0 : 1;
}
