# Build options of polyattn, in one place.
option(POLYATTN_BUILD_TESTS "Build the Criterion test suites" ON)
option(POLYATTN_BUILD_BENCH "Build the polyattn command and benchmarks" ON)
option(POLYATTN_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(POLYATTN_WERROR "Treat warnings as errors" OFF)

set(POLYATTN_WARNINGS -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter)
if(POLYATTN_WERROR)
  list(APPEND POLYATTN_WARNINGS -Werror)
endif()
add_compile_options("$<$<COMPILE_LANGUAGE:C>:${POLYATTN_WARNINGS}>")

if(POLYATTN_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
