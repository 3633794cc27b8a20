// The one function that switches contexts. Contexts are made by Boost.Context's make_fcontext
// and have its frame layout on every platform.
//
// On x86-64 (System V, ELF) the switch is weft's own (jump_x86_64_sysv.S): Boost 1.74's
// jump_fcontext is entered with `call` but resumes the other context with `jmp *%r8`, so every
// switch leaves one return address on the CPU's return-stack predictor that no `ret` consumes,
// and each `ret` on the other side after it is predicted from the wrong entry. weft's yields and
// hand-offs switch between contexts that left from the same call sites, so a switch that ends in
// `ret` keeps the predictor right (docs/benchmarks.md, stop 18: 25 -> 10 ns per yield here).
// Elsewhere Boost's jump_fcontext is used unchanged.
#pragma once

#include <boost/context/detail/fcontext.hpp>

namespace weft::detail {

using fcontext = boost::context::detail::fcontext_t;
using transfer = boost::context::detail::transfer_t;

// `jump(to, data)` saves the calling context, switches to `to` and passes it `data`; it returns
// when something switches back, with the context that did and the pointer it passed. A reference
// to the function rather than an inline wrapper: GCC 12 sends a wrapper's transfer_t through
// memory, a store and reload on the path of every switch.
#if defined(__x86_64__) && defined(__ELF__)
extern "C" transfer weft_jump_fcontext(fcontext to, void* data);
inline constexpr auto& jump = weft_jump_fcontext;
#else
inline constexpr auto& jump = boost::context::detail::jump_fcontext;
#endif

}  // namespace weft::detail
