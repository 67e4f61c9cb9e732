# Regenerates build/generated/git_revision.cpp on every build, rewriting it only when the
# revision or the dirty flag changed, so an unchanged tree recompiles nothing.
set(LRB_GIT_REVISION_CPP ${CMAKE_BINARY_DIR}/generated/git_revision.cpp)
add_custom_target(lrb_git_revision ALL
  BYPRODUCTS ${LRB_GIT_REVISION_CPP}
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUTPUT=${LRB_GIT_REVISION_CPP}
          -DVERSION=${PROJECT_VERSION} -P ${CMAKE_SOURCE_DIR}/cmake/write_git_revision.cmake
  COMMENT "Recording the git revision")
