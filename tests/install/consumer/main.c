/* Plain C against the installed shared library: a one-rank allreduce. */
#include <stdio.h>
#include <weft/weft.h>

int main(void) {
  weftUniqueId id;
  weftComm_t comm;
  float x[3] = {1, 2, 3};
  if (weftGetUniqueId(&id) != weftSuccess || weftCommInitRank(&comm, 1, id, 0) != weftSuccess) {
    fprintf(stderr, "init failed: %s\n", weftGetLastError(NULL));
    return 1;
  }
  if (weftAllReduce(x, x, 3, weftFloat32, weftSum, comm) != weftSuccess) return 1;
  weftCommDestroy(comm);
  printf("consumer_c: %g %g %g\n", x[0], x[1], x[2]);
  return (x[0] == 1 && x[1] == 2 && x[2] == 3) ? 0 : 1;
}
