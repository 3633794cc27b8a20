// SPDX-License-Identifier: Apache-2.0
// weft reports misuse and failed requests by throwing weft::error, a std::system_error whose code
// belongs to weft::error_category(). Hot paths (push, pop, yield, create, join of a finished unit)
// are noexcept or throw only on misuse, never on the fast path.
#pragma once

#include <stdexcept>
#include <string>
#include <system_error>

namespace weft {

/// Error conditions weft reports; values are stable and shared with the C layer.
enum class errc {
  ok = 0,
  not_initialized,       ///< The runtime is not initialised.
  already_initialized,   ///< init() with a different configuration while initialised.
  invalid_config,        ///< A configuration value (from code or WEFT_*) is malformed.
  not_in_ult,            ///< The operation needs to run inside a ULT.
  tasklet_cannot_block,  ///< A tasklet tried to yield, suspend, block or exit.
  not_joinable,          ///< join/detach on an empty, detached or already joined handle.
  invalid_state,         ///< The unit or stream is not in a state that allows the operation.
  wrong_thread,          ///< The call must come from a specific thread (e.g. the primary).
  primary_stream,        ///< The operation is not allowed on the primary execution stream.
  resource,              ///< An allocation, mmap or thread creation failed.
  unsupported,           ///< The pool or scheduler does not offer this operation.
};

/// The category of weft::errc codes.
const std::error_category& error_category() noexcept;

/// Builds a std::error_code from a weft::errc.
inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), error_category()};
}

/// The exception type of every weft API that can fail. what() is the message given when it was
/// thrown, a whole sentence that already says what went wrong ("weft: the runtime is not
/// initialised"); std::system_error would append the code's generic text, which repeats it
/// ("...: weft is not initialised"). code().message() still gives that text.
class error : public std::system_error {
 public:
  error(errc code, const std::string& what)
      : std::system_error(make_error_code(code)),
        what_(what.empty() ? std::string(std::system_error::what()) : what) {}
  /// The message given at the throw, or the code's text when none was.
  const char* what() const noexcept override { return what_.what(); }
  /// The weft condition behind this error.
  errc condition() const noexcept { return static_cast<errc>(code().value()); }

 private:
  std::runtime_error what_;  // a reference-counted string: copying an error cannot throw
};

}  // namespace weft

template <>
struct std::is_error_code_enum<weft::errc> : std::true_type {};
