# Two kinds of build tree (docs/testing.md):
#
#  * the main tree (build/): GCC, Release. Its `check` runs the lit and unit
#    suites, then configures, builds and checks the sanitized tree below it
#    (RAPID_CHECK_SANITIZED, default ON).
#  * the sanitized tree (build/sanitize/, RAPID_SANITIZE=ON): clang-19 with
#    AddressSanitizer + UndefinedBehaviorSanitizer, -O1, assertions on, and
#    libFuzzer's coverage instrumentation so the fuzz targets (test/fuzz/)
#    link against the same libraries. Its `check` runs the same lit and unit
#    suites against its own binaries, then each fuzz target for
#    RAPID_FUZZ_SECONDS.
#
# LLVM Support, protobuf, the ANTLR runtime and GoogleTest stay the Debian
# (uninstrumented, libstdc++) builds: ASan and UBSan only need our code
# instrumented, and clang uses libstdc++ by default on Debian.

option(RAPID_SANITIZE "this is the sanitized tree: ASan + UBSan + fuzzer coverage (needs clang)" OFF)
option(RAPID_CHECK_SANITIZED "`check` also builds and checks the sanitized tree (build/sanitize) and fuzzes" ON)
set(RAPID_FUZZ_SECONDS 30 CACHE STRING "seconds each libFuzzer target runs in `check` (0: skip the runs)")

if(RAPID_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "RAPID_SANITIZE needs clang (-DCMAKE_CXX_COMPILER=clang++-19), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  # Assertions on (no NDEBUG); -O1 keeps the suite fast; line tables are
  # enough for symbolized reports. Later flags win over the build type's.
  if(NOT CMAKE_BUILD_TYPE)
    set(CMAKE_BUILD_TYPE Debug CACHE STRING "" FORCE)
  endif()
  # vptr is left out: LLVM is built without RTTI, so UBSan cannot check the
  # dynamic type of its polymorphic objects.
  set(RAPID_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  add_compile_options(${RAPID_SANITIZER_FLAGS} -fsanitize=fuzzer-no-link -O1 -gline-tables-only)
  # Bounds-checked operator[] and friends in libstdc++ (header-only, no ABI change).
  add_compile_definitions(_GLIBCXX_ASSERTIONS)
  add_link_options(${RAPID_SANITIZER_FLAGS})
  set(RAPID_CHECK_SANITIZED OFF) # this is the sanitized tree
endif()

if(RAPID_CHECK_SANITIZED)
  find_program(RAPID_CLANG_C NAMES clang-19 PATHS /usr/lib/llvm-19/bin)
  find_program(RAPID_CLANG_CXX NAMES clang++-19 PATHS /usr/lib/llvm-19/bin)
  if(NOT RAPID_CLANG_C OR NOT RAPID_CLANG_CXX OR NOT EXISTS /usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.fuzzer-x86_64.a)
    message(FATAL_ERROR "`check` builds an ASan/UBSan tree and libFuzzer targets with clang-19: run "
                        "scripts/install-deps.sh (clang-19, libclang-rt-19-dev, libfuzzer-19-dev), or configure "
                        "with -DRAPID_CHECK_SANITIZED=OFF to skip them")
  endif()
  set(RAPID_SANITIZE_DIR ${CMAKE_BINARY_DIR}/sanitize)
endif()

# The commands `check` runs after the main suites (test/CMakeLists.txt): the
# sanitized tree is configured (once), built and checked like any tree. It
# is built without MPI: Open MPI's own allocations would be leak reports, and
# that tree checks that a rapidc without MPI refuses to run under a launcher.
function(rapid_sanitized_check_commands out)
  set(${out}
    COMMAND ${CMAKE_COMMAND} -S ${CMAKE_SOURCE_DIR} -B ${RAPID_SANITIZE_DIR} -G ${CMAKE_GENERATOR}
            -DCMAKE_C_COMPILER=${RAPID_CLANG_C} -DCMAKE_CXX_COMPILER=${RAPID_CLANG_CXX}
            -DRAPID_SANITIZE=ON -DRAPID_MPI=OFF -DRAPID_FUZZ_SECONDS=${RAPID_FUZZ_SECONDS}
    COMMAND ${CMAKE_COMMAND} --build ${RAPID_SANITIZE_DIR} --target check
    PARENT_SCOPE)
endfunction()
