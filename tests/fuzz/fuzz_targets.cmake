# The fuzz targets; see CMakeLists.txt beside this file for the two build modes.

# Added from tests/CMakeLists.txt, or by fuzz_hook.cmake when that line is absent: once.
get_property(weft_fuzz_added GLOBAL PROPERTY WEFT_FUZZ_ADDED)
if(weft_fuzz_added)
  return()
endif()
set_property(GLOBAL PROPERTY WEFT_FUZZ_ADDED TRUE)

option(WEFT_FUZZ "Build the fuzz targets as libFuzzer binaries (needs clang)" OFF)
set(WEFT_FUZZ_MUTATIONS 200000 CACHE STRING "Mutations per target in the ctest fuzz replays")
# The sanitizer builds (scripts/sanitize.sh) run fewer mutations from another seed, so
# that the inputs they check are not a prefix of the plain build's.
set(WEFT_FUZZ_SEED 1 CACHE STRING "Seed of the ctest fuzz replays' mutations")

if(WEFT_FUZZ AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "WEFT_FUZZ=ON needs clang (libFuzzer); use scripts/fuzz.sh")
endif()

set(WEFT_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})
set(WEFT_FUZZ_CORPUS ${WEFT_FUZZ_DIR}/corpus)

# The replay-and-mutate main, compiled once for every target.
if(NOT WEFT_FUZZ)
  add_library(weft_fuzz_driver OBJECT ${WEFT_FUZZ_DIR}/driver_main.cc)
endif()

# weft_fuzz_target(<name> LAYERS <layer>... [SOURCES <extra .cc>...] [MUTATIONS <n>])
# MUTATIONS: a smaller count for a slow target, to keep its ctest run to seconds.
function(weft_fuzz_target name)
  cmake_parse_arguments(arg "" "MUTATIONS" "LAYERS;SOURCES" ${ARGN})
  if(NOT arg_MUTATIONS OR arg_MUTATIONS GREATER WEFT_FUZZ_MUTATIONS)
    set(arg_MUTATIONS ${WEFT_FUZZ_MUTATIONS})
  endif()
  set(exe weft_fuzz_${name})
  list(TRANSFORM arg_SOURCES PREPEND ${WEFT_FUZZ_DIR}/)
  set(srcs ${WEFT_FUZZ_DIR}/${name}_fuzz.cc ${arg_SOURCES})
  if(NOT WEFT_FUZZ)
    list(APPEND srcs $<TARGET_OBJECTS:weft_fuzz_driver>)
  endif()
  add_executable(${exe} ${srcs})
  set(objs)
  foreach(layer ${arg_LAYERS})
    list(APPEND objs weft_${layer})
  endforeach()
  target_link_libraries(${exe} PRIVATE ${objs} Threads::Threads rt ${CMAKE_DL_LIBS})
  if(WEFT_FUZZ)
    target_compile_options(${exe} PRIVATE -fsanitize=fuzzer-no-link,address,undefined)
    target_link_options(${exe} PRIVATE -fsanitize=fuzzer,address,undefined)
  else()
    add_test(NAME fuzz.${name}
             COMMAND ${exe} --mutations ${arg_MUTATIONS} --seed ${WEFT_FUZZ_SEED}
                     ${WEFT_FUZZ_CORPUS}/${name}
             WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
    set_tests_properties(fuzz.${name} PROPERTIES LABELS fuzz TIMEOUT 60)
  endif()
endfunction()

weft_fuzz_target(store_request LAYERS bootstrap net core)
weft_fuzz_target(store_table LAYERS bootstrap net core)
# A loopback connection per input: ~3k inputs/s rather than ~1M.
weft_fuzz_target(store_client LAYERS bootstrap net core MUTATIONS 5000)
weft_fuzz_target(card LAYERS transport net core SOURCES dns_guard.cc)
weft_fuzz_target(sockaddr LAYERS net core SOURCES dns_guard.cc)
weft_fuzz_target(wire_header LAYERS transport net core)
weft_fuzz_target(slurm_hostlist LAYERS bootstrap net core)
weft_fuzz_target(slurm_tasks LAYERS bootstrap net core)
weft_fuzz_target(ifname_spec LAYERS net core)
weft_fuzz_target(launch_env LAYERS bootstrap net core)
# The shrink agreement's store texts; the codec is compiled in alone (the comm layer
# brings the whole library).
weft_fuzz_target(shrink_codec LAYERS core SOURCES ../../src/comm/shrink_codec.cc)
# WEFT_CHECK_CALLS' comparison of the fingerprints peers sent; compiled in alone likewise.
weft_fuzz_target(call_check LAYERS sched core
                 SOURCES ../../src/comm/call_check.cc ../../src/comm/call.cc)
weft_fuzz_target(unique_id LAYERS comm gpu exec sched transport bootstrap net core SOURCES dns_guard.cc)
weft_fuzz_target(algo_spec LAYERS sched core)
weft_fuzz_target(auth_frame LAYERS net core)

# Regenerates the seed-* files of corpus/ from the real serialisers (not a test).
add_executable(weft_fuzz_seeds ${WEFT_FUZZ_DIR}/seed_gen.cc)
target_link_libraries(weft_fuzz_seeds PRIVATE weft_transport weft_bootstrap weft_net weft_core
                      Threads::Threads rt)
if(WEFT_FUZZ)
  target_compile_options(weft_fuzz_seeds PRIVATE -fsanitize=address,undefined)
  target_link_options(weft_fuzz_seeds PRIVATE -fsanitize=address,undefined)
endif()
