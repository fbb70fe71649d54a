# Install rules, generated man pages and completions, the build facts shown by --version and
# `gpubench doctor`, and the Debian package (cpack -G DEB). See docs/install.md.
include(GNUInstallDirs)

# --- Build facts (app/build_info.cpp) ---------------------------------------------------------
# The architecture list goes in with commas: a ';' would split the definition into several
# compiler arguments (and broke the build of any list of more than one architecture).
string(REPLACE ";" "," gpubench_arch_text "${CMAKE_CUDA_ARCHITECTURES}")
target_compile_definitions(gpubench PRIVATE
  GPUBENCH_CUDA_ARCHITECTURES="${gpubench_arch_text}"
  GPUBENCH_CUDART_LINKAGE="${GPUBENCH_CUDART}")
# MPI: the app asks the library (mpi_built_in()), which lib/CMakeLists.txt builds with or without.

# --- Man pages and completions, written by the built binary from its own CLI definitions -------
set(GPUBENCH_GENERATED_DIR ${PROJECT_BINARY_DIR}/generated)
set(gpubench_generated
  ${GPUBENCH_GENERATED_DIR}/man/gpubench.1.gz
  ${GPUBENCH_GENERATED_DIR}/completions/gpubench.bash
  ${GPUBENCH_GENERATED_DIR}/completions/_gpubench
  ${GPUBENCH_GENERATED_DIR}/completions/gpubench.fish)
add_custom_command(
  OUTPUT ${gpubench_generated}
  COMMAND ${CMAKE_COMMAND} -DGPUBENCH=$<TARGET_FILE:gpubench> -DOUT=${GPUBENCH_GENERATED_DIR}
          -P ${PROJECT_SOURCE_DIR}/cmake/generate-docs.cmake
  DEPENDS gpubench ${PROJECT_SOURCE_DIR}/cmake/generate-docs.cmake
  VERBATIM
  COMMENT "Writing man pages and shell completions from gpubench's CLI definitions")
# Part of ALL (a plain build, `install` and `package` have them); the quick start's
# `--target gpubench` skips them. -DGPUBENCH_INSTALL_DOCS=OFF leaves them out altogether.
option(GPUBENCH_INSTALL_DOCS "Generate and install man pages and completions" ON)
if(GPUBENCH_INSTALL_DOCS)
  add_custom_target(gpubench_docs ALL DEPENDS ${gpubench_generated})
endif()

# --- The HTML report's Python module (app/html_page.cpp, docs/architecture.md) ------------------
# The executable looks for gpubench/html_report.py in ../share/gpubench/python beside its own
# folder: copied there in the build tree (build/app/gpubench -> build/share/...) and installed
# there by the .deb (/usr/bin/gpubench -> /usr/share/...). The wheel packages python/gpubench
# whole, and the executable finds it in site-packages.
set(gpubench_python_modules __init__.py chart_axes.py chart_data.py charts.py html_parts.py
    html_report.py)
foreach(module IN LISTS gpubench_python_modules)
  configure_file(${PROJECT_SOURCE_DIR}/python/gpubench/${module}
                 ${PROJECT_BINARY_DIR}/share/gpubench/python/gpubench/${module} COPYONLY)
endforeach()

# --- Install layout ----------------------------------------------------------------------------
if(SKBUILD)
  # The pip wheel (pyproject.toml): the executable inside the Python package, its CUDA runtime
  # and cuBLAS from NVIDIA's wheels and OpenBLAS from the scipy-openblas32 wheel, found through
  # RUNPATH relative to the executable: site-packages/gpubench/bin/gpubench ->
  # site-packages/nvidia/cu<major>/lib and site-packages/scipy_openblas32/lib.
  set_target_properties(gpubench PROPERTIES INSTALL_RPATH
    "\$ORIGIN/../../nvidia/cu${CUDAToolkit_VERSION_MAJOR}/lib;\$ORIGIN/../../scipy_openblas32/lib")
  install(TARGETS gpubench RUNTIME DESTINATION gpubench/bin)
  # libstdc++ and libgcc_s stay shared, as the manylinux policies expect: built by Debian 12's
  # GCC 12 the binary needs GLIBCXX_3.4.30 and glibc 2.34, hence manylinux_2_35 (auditwheel
  # repair, docs/install.md). Linking them statically would not lower that: Debian's libstdc++.a
  # and libgcc_eh.a call arc4random (glibc 2.36) and _dl_find_object (2.35).
  if(GPUBENCH_INSTALL_DOCS)
    install(DIRECTORY ${GPUBENCH_GENERATED_DIR}/man/ DESTINATION gpubench/share/man/man1)
    install(DIRECTORY ${GPUBENCH_GENERATED_DIR}/completions/ DESTINATION gpubench/share/completions)
  endif()
  return()
endif()

install(TARGETS gpubench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(GPUBENCH_INSTALL_DOCS)
  install(DIRECTORY ${GPUBENCH_GENERATED_DIR}/man/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  install(FILES ${GPUBENCH_GENERATED_DIR}/completions/gpubench.bash
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME gpubench)
  install(FILES ${GPUBENCH_GENERATED_DIR}/completions/_gpubench
          DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
  install(FILES ${GPUBENCH_GENERATED_DIR}/completions/gpubench.fish
          DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gpubench/configs
        FILES_MATCHING PATTERN "*.json")
install(DIRECTORY ${PROJECT_BINARY_DIR}/share/gpubench/python/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/gpubench/python FILES_MATCHING PATTERN "*.py")
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        FILES_MATCHING PATTERN "*.md" PATTERN "*.json" PATTERN "results" EXCLUDE
        PATTERN "images" EXCLUDE)

# --- Debian package ----------------------------------------------------------------------------
# Debian wants a copyright file and a changelog in /usr/share/doc/<package>; both are generated.
set(gpubench_debian_dir ${PROJECT_BINARY_DIR}/debian)
file(WRITE ${gpubench_debian_dir}/copyright
  "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
  "Upstream-Name: gpubench\n\nFiles: *\nCopyright: 2026 the gpubench authors\n"
  "License: other\n The gpubench source tree states no license; see its README.md.\n")
string(TIMESTAMP gpubench_changelog_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE ${gpubench_debian_dir}/changelog.Debian
  "gpubench (${PROJECT_VERSION}) unstable; urgency=medium\n\n"
  "  * Package built from the gpubench source tree (cpack -G DEB).\n\n"
  " -- gpubench maintainers <gpubench-maintainers@example.org>  ${gpubench_changelog_date}\n")
# A version without a Debian revision makes this a native package: its changelog is changelog.gz.
add_custom_command(OUTPUT ${gpubench_debian_dir}/changelog.gz
  COMMAND ${CMAKE_COMMAND} -E copy ${gpubench_debian_dir}/changelog.Debian ${gpubench_debian_dir}/changelog
  COMMAND gzip -9nf ${gpubench_debian_dir}/changelog
  DEPENDS ${gpubench_debian_dir}/changelog.Debian VERBATIM)
add_custom_target(gpubench_debian_docs ALL DEPENDS ${gpubench_debian_dir}/changelog.gz)
install(FILES ${gpubench_debian_dir}/copyright ${gpubench_debian_dir}/changelog.gz
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpubench)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "gpubench maintainers <gpubench-maintainers@example.org>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # gpubench_<version>_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends from the binary's own NEEDED entries (dpkg-shlibdeps): libc6, libstdc++6, libgcc-s1,
# libfmt9, and libopencv-core406 and libopencv-imgproc406 when OpenCV is built in (libopenmpi3
# likewise with MPI). The CUDA runtime is static; cuBLAS is loaded when the pipeline first needs it, from
# NVIDIA's package (its repository for Debian 12 calls it libcublas-13-0), hence Recommends.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The HTML report (--format html) runs python3 with matplotlib: Recommends as well.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "libcublas-${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR}, python3, python3-matplotlib")
# CUPTI (NVIDIA's cuda-cupti-13-0) is loaded only by --timestamps: Suggests.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
    "nvidia-smi, cuda-cupti-${CUDAToolkit_VERSION_MAJOR}-${CUDAToolkit_VERSION_MINOR}")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU vs CPU benchmarks, measured, verified and reported")
# CPack puts the summary on the Description line; this is the extended text (lines < 80).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "gpubench times CUDA kernels, transfers and end-to-end paths (vector add,\n"
  "image augmentation, a two-stage training pipeline), checks every GPU result\n"
  "against a CPU reference and reports tables or versioned JSON. It needs the\n"
  "NVIDIA driver; the CUDA runtime is linked in, and cuBLAS (for the pipeline)\n"
  "is loaded at run time.")
include(CPack)
