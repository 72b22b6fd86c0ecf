// Loading libfabric at run time (src/transport/ofi/fabric_lib.h): a missing library or
// one that is not libfabric is an error naming it; the real one resolves every function.
#ifdef WEFT_HAVE_OFI

#include "transport/ofi/fabric_lib.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

namespace weft::transport::ofi {
namespace {

using ::testing::HasSubstr;

TEST(FabricLibTest, MissingLibraryNamesItAndTheVariable) {
  Result<FabricLib> lib = OpenFabricLib("/nonexistent/weft-test/libfabric.so.1");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), Code::kSystemError);
  EXPECT_THAT(lib.status().message(), HasSubstr("/nonexistent/weft-test/libfabric.so.1"));
  EXPECT_THAT(lib.status().message(), HasSubstr("(WEFT_TRANSPORT=ofi or shm+ofi) needs libfabric"));
  EXPECT_THAT(lib.status().message(), HasSubstr("WEFT_OFI_LIBRARY"));
}

TEST(FabricLibTest, ALibraryThatIsNotLibfabricIsRefused) {
  Result<FabricLib> lib = OpenFabricLib("libc.so.6");
  ASSERT_FALSE(lib.ok());
  EXPECT_THAT(lib.status().message(), HasSubstr("fi_version"));
}

TEST(FabricLibTest, LibraryPathComesFromTheEnvironment) {
  unsetenv("WEFT_OFI_LIBRARY");
  EXPECT_EQ(FabricLibPath(), "libfabric.so.1");
  setenv("WEFT_OFI_LIBRARY", "/opt/amazon/efa/lib/libfabric.so.1", 1);
  EXPECT_EQ(FabricLibPath(), "/opt/amazon/efa/lib/libfabric.so.1");
  unsetenv("WEFT_OFI_LIBRARY");
}

TEST(FabricLibTest, LoadsTheInstalledLibraryOnceWithoutItsSignalHandlers) {
  // ctest runs each test in its own process, so this is the first load here.
  const int sigs[] = {SIGINT, SIGTERM, SIGSEGV, SIGABRT};
  struct sigaction before[4] {};
  for (int i = 0; i < 4; ++i) ASSERT_EQ(sigaction(sigs[i], nullptr, &before[i]), 0);
  Result<const FabricLib*> lib = LoadFabricLib();
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  EXPECT_GE(FI_MAJOR((*lib)->version()), 1u);
  EXPECT_EQ(LoadFabricLib().value(), *lib);
  EXPECT_EQ(&Fabric(), *lib);
  // Set before dlopen (unless the user had set it), so libinfinipath leaves signals alone.
  ASSERT_NE(std::getenv("IPATH_NO_BACKTRACE"), nullptr);
  for (int i = 0; i < 4; ++i) {
    struct sigaction now {};
    ASSERT_EQ(sigaction(sigs[i], nullptr, &now), 0);
    EXPECT_EQ(now.sa_handler, before[i].sa_handler) << "loading libfabric changed the handler "
                                                    << "of signal " << sigs[i];
  }
  fi_info* hints = Fabric().dupinfo(nullptr);
  ASSERT_NE(hints, nullptr);
  Fabric().freeinfo(hints);
  EXPECT_STREQ(Fabric().strerror(FI_EAGAIN), "Resource temporarily unavailable");
}

}  // namespace
}  // namespace weft::transport::ofi

#endif  // WEFT_HAVE_OFI
