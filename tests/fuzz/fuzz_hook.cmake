# Lets a build include the fuzz targets without the add_subdirectory(fuzz) line in
# tests/CMakeLists.txt (scripts/fuzz.sh uses it, so the libFuzzer build needs neither
# the unit tests nor GTest):
#   cmake -DCMAKE_PROJECT_INCLUDE=<repo>/tests/fuzz/fuzz_hook.cmake ...
# It runs right after project(); the include is deferred to the end of the top-level
# CMakeLists.txt, when the weft_<layer> targets exist (a deferred call may not
# add_subdirectory, hence include). The guard in fuzz_targets.cmake makes it a no-op
# when tests/CMakeLists.txt already added tests/fuzz.
# (EVAL expands the path now; a deferred call's own arguments expand only when it runs.)
cmake_language(EVAL CODE
    "cmake_language(DEFER DIRECTORY \"${CMAKE_SOURCE_DIR}\" CALL include \"${CMAKE_CURRENT_LIST_DIR}/fuzz_targets.cmake\")")
