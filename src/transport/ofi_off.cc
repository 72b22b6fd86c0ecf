// ofi::RailSetup (ofi/rail_setup.h) in a build without libfabric (WEFT_OFI=OFF), where
// the build leaves src/transport/ofi/ out; so it lives here, and compiles to nothing in a
// build with libfabric. TransportModeFromEnv already refuses ofi in such a build; a mesh
// asked for it directly (MeshOptions::mode) opens no endpoint and fails at Connect.
#ifndef WEFT_HAVE_OFI

#include "transport/ofi/rail_setup.h"

namespace weft::transport::ofi {

Status RailSetup::Open(int /*local_index*/, int /*local_size*/, Card* /*mine*/) {
  return Status::Ok();
}

Status RailSetup::Connect(TransportMode /*mode*/, const Card& /*mine*/,
                          const std::vector<Card>& /*cards*/,
                          std::vector<std::unique_ptr<Link>>* /*links*/) {
  return InvalidArgument("WEFT_TRANSPORT=ofi, but this weft was built without libfabric");
}

}  // namespace weft::transport::ofi

#endif  // !WEFT_HAVE_OFI
