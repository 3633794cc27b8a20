# SPDX-License-Identifier: Apache-2.0
# Sanitizer builds. The runtime annotates its context switches for both sanitizers
# (runtime/src/core/context.cpp), so ULT stacks are understood rather than reported.
if(WEFT_SANITIZE STREQUAL "address")
  set(WEFT_SANITIZER_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
elseif(WEFT_SANITIZE STREQUAL "thread")
  set(WEFT_SANITIZER_FLAGS -fsanitize=thread -fno-omit-frame-pointer)
elseif(NOT WEFT_SANITIZE STREQUAL "")
  message(FATAL_ERROR "WEFT_SANITIZE must be '', 'address' or 'thread', not '${WEFT_SANITIZE}'")
endif()
if(WEFT_SANITIZER_FLAGS)
  add_compile_options(${WEFT_SANITIZER_FLAGS})
  add_link_options(${WEFT_SANITIZER_FLAGS})
  add_compile_definitions(WEFT_SANITIZED=1)
endif()
