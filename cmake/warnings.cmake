# Flags for lrbench's own targets only (never third-party code: LibTorch, GoogleTest and the
# other imported targets come in as system includes, and GoogleTest built from source
# (LRB_HEADER_ONLY_DEPS) gets nothing from here).
#
# Warnings: -Wall -Wextra, and -Werror with LRB_WERROR=ON (scripts/build.sh turns it on
# when CI=true). Less -Wmissing-field-initializers: option tables and other aggregates
# ({"dim", OptionType::Int, json(64), "model width"}) leave members with defaults out on
# purpose.
# Sanitizers: LRB_SANITIZE=address,undefined (the asan preset of CMakePresets.json)
# compiles the own code with them and links every program that links lrb_core with them;
# not the static lrbench launcher, which links nothing of lrbench's and cannot link them.
option(LRB_WARNINGS "Compile lrbench's own code with -Wall -Wextra" ON)
option(LRB_WERROR "Treat compiler warnings in lrbench's own code as errors (on in CI)" OFF)
set(LRB_SANITIZE "" CACHE STRING "Sanitizers for lrbench's own code, e.g. address,undefined")
set(LRB_WARNING_FLAGS "")
if(LRB_WARNINGS)
  set(LRB_WARNING_FLAGS -Wall -Wextra -Wno-missing-field-initializers)
endif()
if(LRB_WERROR)
  list(APPEND LRB_WARNING_FLAGS -Werror)
endif()

# lrb_warnings(<target>...): compile the targets' own sources with the warning flags (and
# the sanitizers, except for the launcher).
function(lrb_warnings)
  foreach(t ${ARGN})
    target_compile_options(${t} PRIVATE ${LRB_WARNING_FLAGS})
    if(LRB_SANITIZE AND NOT t STREQUAL "lrbench")
      target_compile_options(${t} PRIVATE -fsanitize=${LRB_SANITIZE} -fno-omit-frame-pointer)
      target_link_options(${t} PRIVATE -fsanitize=${LRB_SANITIZE})
    endif()
  endforeach()
endfunction()
