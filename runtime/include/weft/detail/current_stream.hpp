// SPDX-License-Identifier: Apache-2.0
// The thread-local that names the calling thread's stream, for the inline queries of pool.hpp and
// weft/ext/stream.hpp (one %fs-relative load each).
#pragma once

namespace weft::detail {

class stream;

/// The calling thread's stream (nullptr on an external thread); written by the runtime only.
/// initial-exec: one %fs-relative load instead of a __tls_get_addr call (libweft is linked at
/// program start, or dlopen'ed into glibc's static TLS surplus, which one pointer always fits).
/// constinit: no dynamic initialisation, so no TLS wrapper call on every access. A ULT may
/// migrate between kernel threads: read it afresh after anything that may switch context.
[[gnu::tls_model("initial-exec")]] extern constinit thread_local stream* tls_stream;

}  // namespace weft::detail
