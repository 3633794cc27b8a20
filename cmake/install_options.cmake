# SPDX-License-Identifier: Apache-2.0
# Install options that the tests read too, so set before any component is added.
# pkg-config's flags say where to link from, not where the loader looks at run time: unless
# libdir is one of the loader's own directories, Libs also records it as the program's RUNPATH,
# so that a program linked by `pkg-config --libs` runs without LD_LIBRARY_PATH. The loader's own
# directories get none (a RUNPATH there is redundant, and distribution packages forbid it).
# /usr/local/lib is not one: the loader finds a library there only once ldconfig has run.
set(_weft_loader_dirs /lib /lib64 /usr/lib /usr/lib64)
if(CMAKE_LIBRARY_ARCHITECTURE)
  list(APPEND _weft_loader_dirs /lib/${CMAKE_LIBRARY_ARCHITECTURE} /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE})
endif()
set(_weft_pc_rpath_default ON)
if(CMAKE_INSTALL_FULL_LIBDIR IN_LIST _weft_loader_dirs)
  set(_weft_pc_rpath_default OFF)
endif()
option(WEFT_PKGCONFIG_RPATH
  "The .pc files add -Wl,-rpath,<libdir> to Libs (default: unless libdir is a directory the loader searches)"
  ${_weft_pc_rpath_default})
