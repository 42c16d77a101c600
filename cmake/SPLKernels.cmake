# spl_add_kernels(<target> SOURCES a.spl [b.spl ...] [TARGETS cpu [cuda]] [FLAGS ...])
#
# Compiles each .spl file with splc at build time into an object and a C header (in
# ${CMAKE_CURRENT_BINARY_DIR}/spl/<target>/), adds the objects to <target>, puts the headers on its
# include path and links the SPL runtime. Used by the tests and benchmarks, and installed for
# users (find_package(SPL)).
function(spl_add_kernels target)
  cmake_parse_arguments(SPLK "" "" "SOURCES;TARGETS;FLAGS" ${ARGN})
  if(NOT SPLK_TARGETS)
    set(SPLK_TARGETS cpu)
  endif()
  string(REPLACE ";" "," _targets "${SPLK_TARGETS}")
  if(TARGET splc)
    set(_splc $<TARGET_FILE:splc>)
    set(_dep splc)
  else()
    set(_splc ${SPL_SPLC_EXECUTABLE})
    set(_dep "")
  endif()
  set(_outdir ${CMAKE_CURRENT_BINARY_DIR}/spl/${target})
  file(MAKE_DIRECTORY ${_outdir})
  foreach(_src ${SPLK_SOURCES})
    get_filename_component(_abs ${_src} ABSOLUTE)
    get_filename_component(_name ${_src} NAME_WE)
    set(_obj ${_outdir}/${_name}.o)
    set(_hdr ${_outdir}/${_name}.h)
    # -MD: splc lists the modules it imported, so that editing one rebuilds the object.
    add_custom_command(
      OUTPUT ${_obj} ${_hdr}
      COMMAND ${_splc} ${_abs} --target=${_targets} -o ${_obj} --header ${_hdr} -MD -MF ${_obj}.d ${SPLK_FLAGS}
      DEPENDS ${_abs} ${_dep}
      DEPFILE ${_obj}.d
      COMMENT "splc ${_name}.spl"
      VERBATIM)
    set_source_files_properties(${_obj} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    target_sources(${target} PRIVATE ${_obj} ${_hdr})
  endforeach()
  target_include_directories(${target} PRIVATE ${_outdir})
  if(TARGET splrt)
    target_link_libraries(${target} PRIVATE splrt)
  elseif(TARGET SPL::splrt)
    target_link_libraries(${target} PRIVATE SPL::splrt)
  endif()
  # The static runtime's link interface names the C++ runtime, threads and libdl it needs, so a
  # C-only project (project(app C)) links with its C compiler.
endfunction()
