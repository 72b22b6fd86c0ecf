# Cross build for aarch64 (arm64) Linux with Debian's g++-aarch64-linux-gnu and the arm64
# -dev packages installed side by side through multiarch (dpkg --add-architecture arm64),
# as scripts/cross-aarch64.sh sets up. No sysroot copy: Debian keeps arm64 libraries in
# /usr/lib/aarch64-linux-gnu and shares the architecture-independent headers in
# /usr/include, so CMake finds fmt, GTest and libcrypto by CMAKE_LIBRARY_ARCHITECTURE.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# pkg-config must look at arm64's .pc files only, never the build machine's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
# ctest and gtest_discover_tests run the test binaries through qemu, so the build and its
# tests work whether or not the kernel has a binfmt_misc entry for aarch64 (the
# multi-process tests, which exec further arm64 programs, need that entry).
# No -L: the programs load the multiarch arm64 libc (libc6:arm64, /lib/ld-linux-aarch64.so.1)
# that the arm64 -dev packages bring, as under binfmt. With -L /usr/aarch64-linux-gnu (the
# cross compiler's own libc) qemu-user 7.2 spun forever in the first pthread_create.
find_program(WEFT_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(WEFT_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${WEFT_QEMU_AARCH64}")
endif()
