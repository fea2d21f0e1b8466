#===- OberDocs.cmake - documentation generated from TableGen -------------===#
#
# ober_add_doc(<td name without .td> <path under docs/generated> <tblgen flags>)
# generates a Markdown page with mlir-tblgen into build/docs/generated/. The
# `ober-docs` target builds them all; `ober-docs-update` copies them into the
# source tree, and the `docs-up-to-date` test fails when the copies in
# docs/generated/ are stale.
#
#===----------------------------------------------------------------------===#
function(ober_add_doc name out_rel)
  set(LLVM_TARGET_DEFINITIONS ${name}.td)
  tablegen(MLIR ${name}.md ${ARGN})
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/${name}.md)
  set(out ${PROJECT_BINARY_DIR}/docs/generated/${out_rel})
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E copy ${gen} ${out}
    DEPENDS ${gen})
  string(REPLACE "/" "-" target_suffix ${out_rel})
  add_custom_target(ober-doc-${target_suffix} DEPENDS ${out})
  set_property(GLOBAL APPEND PROPERTY OBER_DOC_TARGETS ober-doc-${target_suffix})
  set_property(GLOBAL APPEND PROPERTY OBER_DOC_FILES ${out_rel})
endfunction()
