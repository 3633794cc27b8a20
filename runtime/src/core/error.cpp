// SPDX-License-Identifier: Apache-2.0
#include "weft/error.hpp"

namespace weft {

namespace {
class category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "weft"; }
  std::string message(int code) const override {
    switch (static_cast<errc>(code)) {
      case errc::ok:
        return "success";
      case errc::not_initialized:
        return "weft is not initialised";
      case errc::already_initialized:
        return "weft is already initialised";
      case errc::invalid_config:
        return "invalid configuration";
      case errc::not_in_ult:
        return "must be called from a ULT";
      case errc::tasklet_cannot_block:
        return "a tasklet cannot yield or block";
      case errc::not_joinable:
        return "the handle owns no joinable unit";
      case errc::invalid_state:
        return "invalid state for this operation";
      case errc::wrong_thread:
        return "called from the wrong thread";
      case errc::primary_stream:
        return "not allowed on the primary stream";
      case errc::resource:
        return "out of resources";
      case errc::unsupported:
        return "operation not supported";
    }
    return "unknown weft error";
  }
};
}  // namespace

const std::error_category& error_category() noexcept {
  static const category instance;
  return instance;
}

}  // namespace weft
