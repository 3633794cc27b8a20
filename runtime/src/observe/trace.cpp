// SPDX-License-Identifier: Apache-2.0
// Trace sessions (weft/trace.hpp) and the writer of the Chrome trace event format.
//
// Each stream appends 32-byte records to its own buffer (trace_buffer.hpp); the file is written
// at flush(), stop() or finalize from a snapshot of every buffer. The writer turns a stream's
// run_begin/run_end records into complete ("X") slices on the stream's track, and pairs each
// creation and each wake-up with the first run of the unit that follows it (a flow "s" on the
// source's track, "f" on the run's), so that the hot path records no flow ids.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

// Only here, in a .cpp: nlohmann-json is header-only, and no installed header includes it.
#include <nlohmann/json.hpp>

#include "core/runtime_state.hpp"
#include "observe/observe.hpp"
#include "observe/trace_buffer.hpp"
#include "platform/assert.hpp"
#include "weft/error.hpp"
#include "weft/stats.hpp"
#include "weft/trace.hpp"

namespace weft::detail {

std::atomic<std::uint32_t> g_trace_gen{0};

namespace {

struct session_state {
  std::mutex mutex;  // start/stop/flush, and buffers joining the session
  std::string path;
  std::vector<trace_buffer*> buffers;  // of the session recording now
  // Buffers of ended sessions: a stream that read the generation just before a stop may still
  // append to its old buffer, so they are freed only at the next start() or at teardown.
  std::vector<trace_buffer*> retired;
  std::uint64_t ticks0 = 0;
  std::chrono::steady_clock::time_point time0;
};

session_state& session() {
  static auto* s = new session_state;  // leaked: streams may record during static destruction
  return *s;
}

/// Chunks of ended sessions kept for the next one (already faulted in), up to `keep_chunks`.
struct chunk_pool {
  static constexpr std::size_t keep_chunks = 128;  // 256 MiB
  std::mutex mutex;
  std::vector<trace_chunk*> free;
};

chunk_pool& chunks() {
  static auto* p = new chunk_pool;
  return *p;
}

constexpr std::align_val_t chunk_alignment{trace_chunk::bytes};

void delete_chunk(trace_chunk* c) noexcept {
  c->~trace_chunk();
  ::operator delete(static_cast<void*>(c), chunk_alignment);
}

/// Gives the chunks of `v`'s buffers back to the pool (or frees them) and frees the buffers.
void free_buffers(std::vector<trace_buffer*>& v) noexcept {
  chunk_pool& p = chunks();
  std::lock_guard lock(p.mutex);
  for (trace_buffer* b : v) {
    assert_invariant([b] { return b && b->head; },
                     "trace: a session's buffer has its first chunk from the start");
    for (trace_chunk* c = b->head; c;) {
      trace_chunk* next = c->next.load(std::memory_order_acquire);
      bool kept = false;
      if (p.free.size() < chunk_pool::keep_chunks) {
        try {
          p.free.push_back(c);
          kept = true;
        } catch (...) {
        }
      }
      if (!kept) delete_chunk(c);
      c = next;
    }
    delete b;
  }
  v.clear();
}

/// Frees every pooled chunk (teardown).
void drain_chunks() noexcept {
  chunk_pool& p = chunks();
  std::lock_guard lock(p.mutex);
  for (trace_chunk* c : p.free) delete_chunk(c);
  p.free.clear();
  p.free.shrink_to_fit();
}

/// The records of one buffer as they were at one moment.
struct snapshot {
  int rank = 0;
  std::vector<std::pair<const trace_record*, std::size_t>> parts;
  std::uint64_t dropped = 0;

  template <class F>
  void for_each(F&& f) const {
    for (const auto& [r, n] : parts)
      for (std::size_t i = 0; i < n; ++i) f(r[i]);
  }
};

snapshot take_snapshot(const trace_buffer& b) {
  snapshot s;
  s.rank = b.rank;
  for (const trace_chunk* c = b.head; c; c = c->next.load(std::memory_order_acquire)) {
    const std::size_t n = c->n.load(std::memory_order_acquire);
    assert_invariant([n] { return n <= trace_chunk::capacity; },
                     "trace: a chunk counts at most its capacity");
    s.parts.emplace_back(c->r, n);
    if (n < trace_chunk::capacity) break;  // a later chunk would postdate this count
  }
  s.dropped = b.dropped.load(std::memory_order_relaxed);
  return s;
}

/// Buffered output with the few formatting primitives the events need.
class json_out {
 public:
  explicit json_out(std::FILE* f) : f_(f), buf_(new char[cap]) {}
  ~json_out() { flush(); }
  json_out(const json_out&) = delete;
  json_out& operator=(const json_out&) = delete;

  json_out& operator<<(const char* s) { return raw(s, std::strlen(s)); }
  json_out& operator<<(std::uint64_t v) {
    char tmp[24];
    auto [end, ec] = std::to_chars(tmp, tmp + sizeof tmp, v);
    return raw(tmp, static_cast<std::size_t>(end - tmp));
  }
  json_out& operator<<(int v) {
    char tmp[16];
    auto [end, ec] = std::to_chars(tmp, tmp + sizeof tmp, v);
    return raw(tmp, static_cast<std::size_t>(end - tmp));
  }
  /// Nanoseconds as microseconds with three decimals (the format's unit).
  json_out& micros(std::uint64_t ns) {
    *this << ns / 1000;
    char tmp[4] = {'.', static_cast<char>('0' + ns % 1000 / 100),
                   static_cast<char>('0' + ns % 100 / 10), static_cast<char>('0' + ns % 10)};
    return raw(tmp, 4);
  }
  json_out& hex(std::uint64_t v) {
    char tmp[24] = {'"', '0', 'x'};
    auto [end, ec] = std::to_chars(tmp + 3, tmp + sizeof tmp - 1, v, 16);
    *end++ = '"';
    return raw(tmp, static_cast<std::size_t>(end - tmp));
  }
  /// A JSON string literal of `s`, escaped by nlohmann-json's serializer writing straight into
  /// this buffer. The string value and the serializer are kept between calls, so a name costs a
  /// copy into the value's storage and no allocation once that has grown. Bytes that are not
  /// UTF-8 become U+FFFD, so a bad name cannot make the trace unparsable.
  json_out& quoted(const char* s) {
    if (!escaper_) {
      escaper_ = std::make_unique<serializer>(std::make_shared<sink>(*this), ' ',
                                              nlohmann::json::error_handler_t::replace);
    }
    name_.get_ref<std::string&>().assign(s);
    escaper_->dump(name_, false, false, 0);
    return *this;
  }
  json_out& raw(const char* s, std::size_t n) {
    if (used_ + n > cap) [[unlikely]] {
      flush();
      if (n > cap) {
        if (std::fwrite(s, 1, n, f_) != n) failed_ = true;
        return *this;
      }
    }
    std::memcpy(buf_.get() + used_, s, n);
    used_ += n;
    assert_invariant([this] { return used_ <= cap; }, "trace: the output buffer never overflows");
    return *this;
  }
  void flush() {
    if (used_ && std::fwrite(buf_.get(), 1, used_, f_) != used_) failed_ = true;
    used_ = 0;
  }
  bool failed() const { return failed_; }

 private:
  /// Hands the serializer's output to raw(). nlohmann-json has no public API that escapes into
  /// a caller's buffer, so this uses its output-adapter interface (the one dump() itself uses).
  class sink final : public nlohmann::detail::output_adapter_protocol<char> {
   public:
    explicit sink(json_out& out) : out_(out) {}
    void write_character(char c) override { out_.raw(&c, 1); }
    void write_characters(const char* s, std::size_t n) override { out_.raw(s, n); }

   private:
    json_out& out_;
  };
  using serializer = nlohmann::detail::serializer<nlohmann::json>;

  static constexpr std::size_t cap = std::size_t{1} << 20;
  nlohmann::json name_ = std::string();
  std::unique_ptr<serializer> escaper_;
  std::FILE* f_;
  std::unique_ptr<char[]> buf_;
  std::size_t used_ = 0;
  bool failed_ = false;
};

/// A run's beginning, a creation or a wake-up, for pairing flows with runs: 16 bytes, sorted by
/// (unit, time). `tag` packs the time since the session began (above bit 13), the stream's rank
/// (bits 1-12) and whether it is a wake-up (bit 0).
struct flow_ref {
  std::uint64_t id;
  std::uint64_t tag;

  static constexpr int rank_bits = 12;
  static flow_ref make(std::uint64_t id, std::uint64_t ts, std::uint64_t ticks0, int rank,
                       bool wake) {
    const std::uint64_t t = ts > ticks0 ? ts - ticks0 : 0;
    return {id, t << (rank_bits + 1) | static_cast<std::uint64_t>(rank) << 1 | (wake ? 1 : 0)};
  }
  std::uint64_t ts(std::uint64_t ticks0) const { return (tag >> (rank_bits + 1)) + ticks0; }
  int rank() const { return static_cast<int>((tag >> 1) & ((1u << rank_bits) - 1)); }
  bool wake() const { return tag & 1; }
  friend bool operator<(const flow_ref& x, const flow_ref& y) {
    return x.id != y.id ? x.id < y.id : x.tag < y.tag;
  }
};

/// Throws the error for a trace file that cannot be created or written. The path names no
/// writable file (a missing directory, no permission, a directory, a read-only file system) far
/// more often than the system runs short, and only the caller can fix the path: that is
/// errc::invalid_config; only a lack of memory, descriptors or disk space is errc::resource.
[[noreturn]] void throw_file_error(const std::string& what, const std::string& path, int err) {
  const bool resource =
      err == ENOMEM || err == EMFILE || err == ENFILE || err == ENOSPC || err == EDQUOT;
  throw error(resource ? errc::resource : errc::invalid_config,
              what + " '" + path + "': " + std::strerror(err));
}

const char* kind_name(std::uint8_t kind) {
  return kind == static_cast<std::uint8_t>(unit_kind::tasklet) ? "tasklet" : "ult";
}

/// Writes the trace of `snaps` to `path`; ticks convert to ns since `ticks0` by `ns_per_tick`.
void write_trace(const std::string& path, const std::vector<snapshot>& snaps, std::uint64_t ticks0,
                 double ns_per_tick, std::uint64_t end_ticks) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw_file_error("weft: cannot write the trace to", path, errno);
  const auto ns = [&](std::uint64_t t) -> std::uint64_t {
    return t <= ticks0 ? 0
                       : static_cast<std::uint64_t>(static_cast<double>(t - ticks0) * ns_per_tick);
  };
  const int pid = static_cast<int>(getpid());
  bool failed = false;
  {
    json_out out(f);
    bool first = true;
    const auto begin_event = [&](const char* ph, int rank, std::uint64_t t) -> json_out& {
      out << (first ? "\n{\"ph\":\"" : ",\n{\"ph\":\"") << ph << "\",\"pid\":" << pid
          << ",\"tid\":" << rank << ",\"ts\":";
      first = false;
      return out.micros(ns(t));
    };
    out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
    out << "\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << pid
        << ",\"tid\":0,\"args\":{\"name\":\"weft\"}}";
    first = false;
    std::uint64_t dropped = 0;
    for (const snapshot& s : snaps) {
      dropped += s.dropped;
      out << ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << pid << ",\"tid\":" << s.rank
          << ",\"args\":{\"name\":\"stream " << s.rank << "\"}}";
      out << ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":" << pid
          << ",\"tid\":" << s.rank << ",\"args\":{\"sort_index\":" << s.rank << "}}";
    }

    // Slices and instants, stream by stream.
    std::vector<flow_ref> runs;
    for (const snapshot& s : snaps) {
      struct open_run {
        bool open = false;
        std::uint64_t id = 0, ts = 0, pool = 0;
        std::uint8_t kind = 0;
        const char* name = nullptr;
      } cur;
      std::uint64_t park_ts = 0;
      bool parked = false;
      const auto close = [&](std::uint64_t t) {
        if (!cur.open) return;
        cur.open = false;
        begin_event("X", s.rank, cur.ts) << ",\"dur\":";
        out.micros(ns(t) - ns(cur.ts)) << ",\"cat\":\"" << kind_name(cur.kind) << "\",\"name\":";
        if (cur.name) {
          out.quoted(cur.name);
        } else {
          out << "\"" << kind_name(cur.kind) << " " << cur.id << "\"";
        }
        out << ",\"args\":{\"id\":" << cur.id << ",\"pool\":";
        out.hex(cur.pool) << "}}";
      };
      const auto instant = [&](const trace_record& r, const char* name) -> json_out& {
        return begin_event("i", s.rank, r.ts)
               << ",\"s\":\"t\",\"cat\":\"weft\",\"name\":\"" << name << "\",\"args\":{";
      };
      s.for_each([&](const trace_record& r) {
        switch (r.what) {
          case trace_kind::run_begin:
            close(r.ts);
            cur = {true, r.a, r.ts, r.b, r.kind, nullptr};
            runs.push_back(flow_ref::make(r.a, r.ts, ticks0, s.rank, false));
            break;
          case trace_kind::run_name:
            if (cur.open && cur.id == r.a) cur.name = reinterpret_cast<const char*>(r.b);
            break;
          case trace_kind::run_end:
            close(r.ts);
            break;
          case trace_kind::create:
          case trace_kind::wake:
            break;  // flows, below
          case trace_kind::steal:
            instant(r, "steal") << "\"first\":" << r.a << ",\"units\":" << std::uint64_t{r.c}
                                << "}}";
            break;
          case trace_kind::migrate:
            instant(r, "migrate") << "\"unit\":" << r.a << ",\"to_pool\":";
            out.hex(r.b) << "}}";
            break;
          case trace_kind::park_begin:
            parked = true;
            park_ts = r.ts;
            break;
          case trace_kind::park_end:
            if (parked) {
              begin_event("X", s.rank, park_ts) << ",\"dur\":";
              out.micros(ns(r.ts) - ns(park_ts))
                  << ",\"cat\":\"park\",\"name\":\"parked\",\"args\":{}}";
            }
            parked = false;
            break;
          case trace_kind::stack_push:
            instant(r, "stacked scheduler begins") << "}}";
            break;
          case trace_kind::stack_pop:
            instant(r, "stacked scheduler ends") << "}}";
            break;
          case trace_kind::shrink:
            instant(r, "shrink") << "\"streams\":" << std::uint64_t{r.c} << "}}";
            break;
          case trace_kind::expand:
            instant(r, "expand") << "\"streams\":" << std::uint64_t{r.c} << "}}";
            break;
        }
      });
      close(end_ticks);  // still running when the snapshot was taken
    }

    // Flows: each creation or wake-up to the first run of its unit at or after it. Both lists
    // sorted by (unit, time) and walked together: one pass, no search per flow.
    std::vector<flow_ref> sources;
    for (const snapshot& s : snaps) {
      s.for_each([&](const trace_record& r) {
        if (r.what == trace_kind::create || r.what == trace_kind::wake)
          sources.push_back(flow_ref::make(r.a, r.ts, ticks0, s.rank, r.what == trace_kind::wake));
      });
    }
    std::sort(runs.begin(), runs.end());
    std::sort(sources.begin(), sources.end());
    std::uint64_t flow = 0;
    auto it = runs.begin();
    for (const flow_ref& src : sources) {
      // The first run of the unit at or after the source (a run's tag has bit 0 clear, so a run
      // at the very same tick as a wake-up sorts before it: compare the times alone).
      const std::uint64_t at = src.tag >> (flow_ref::rank_bits + 1);
      while (it != runs.end() &&
             (it->id < src.id || (it->id == src.id && (it->tag >> (flow_ref::rank_bits + 1)) < at)))
        ++it;
      if (it == runs.end()) break;
      if (it->id != src.id) continue;  // not run (yet) while recording
      const char* name = src.wake() ? "wake" : "create";
      ++flow;
      begin_event("s", src.rank(), src.ts(ticks0))
          << ",\"cat\":\"" << name << "\",\"name\":\"" << name << "\",\"id\":" << flow
          << ",\"args\":{\"unit\":" << src.id << "}}";
      begin_event("f", it->rank(), it->ts(ticks0))
          << ",\"bp\":\"e\",\"cat\":\"" << name << "\",\"name\":\"" << name << "\",\"id\":" << flow
          << "}";
    }
    out << "\n],\"otherData\":{\"dropped_records\":" << dropped << "}}\n";
    out.flush();
    failed = out.failed();
  }
  if (std::fclose(f) != 0) failed = true;
  if (failed) throw_file_error("weft: cannot write the trace to", path, errno);
}

/// Writes the session's buffers as they are now. Under the session's mutex.
void write_session(session_state& ss, const std::vector<trace_buffer*>& buffers) {
  // Runs still open end here, before the wait below.
  const std::uint64_t stop_ticks = trace_now();
  std::vector<snapshot> snaps;
  snaps.reserve(buffers.size());
  for (const trace_buffer* b : buffers) snaps.push_back(take_snapshot(*b));
  std::sort(snaps.begin(), snaps.end(),
            [](const snapshot& x, const snapshot& y) { return x.rank < y.rank; });
  // The conversion from ticks to time is measured over the session; a short one is stretched to
  // 20 ms so that the ratio is precise.
  constexpr auto min_span = std::chrono::milliseconds(20);
  const auto spent = std::chrono::steady_clock::now() - ss.time0;
  if (spent < min_span) std::this_thread::sleep_for(min_span - spent);
  const std::uint64_t ticks1 = trace_now();
  const auto time1 = std::chrono::steady_clock::now();
  const double ns_span = std::chrono::duration<double, std::nano>(time1 - ss.time0).count();
  const double ns_per_tick =
      ticks1 > ss.ticks0 ? ns_span / static_cast<double>(ticks1 - ss.ticks0) : 1.0;
  // Time 0 is the first event recorded (the first buffer of a session may take a while to
  // appear: its memory is faulted in then).
  std::uint64_t origin = stop_ticks;
  for (const snapshot& s : snaps)
    if (!s.parts.empty() && s.parts.front().second > 0)
      origin = std::min(origin, s.parts.front().first[0].ts);
  origin = std::max(origin, ss.ticks0);
  write_trace(ss.path, snaps, origin, ns_per_tick, std::max(stop_ticks, origin));
}

}  // namespace

trace_chunk* new_trace_chunk() noexcept {
  {
    chunk_pool& p = chunks();
    std::lock_guard lock(p.mutex);
    if (!p.free.empty()) {
      trace_chunk* c = p.free.back();
      p.free.pop_back();
      c->n.store(0, std::memory_order_relaxed);
      c->next.store(nullptr, std::memory_order_relaxed);
      return c;
    }
  }
  void* mem = ::operator new(trace_chunk::bytes, chunk_alignment, std::nothrow);
  if (!mem) return nullptr;
  madvise(mem, trace_chunk::bytes, MADV_HUGEPAGE);  // a hint: without it, 4 KiB pages
  return ::new (mem) trace_chunk;
}

trace_buffer* attach_trace_buffer(stream& s, std::uint32_t gen) noexcept {
  assert_invariant([gen] { return (gen & 1) != 0; },
                   "trace: a buffer is attached for a session that records (odd generation)");
  session_state& ss = session();
  std::lock_guard lock(ss.mutex);
  // Whatever happens, this stream does not ask again in this session.
  s.observer().trace = nullptr;
  s.observer().trace_gen = gen;
  if (g_trace_gen.load(std::memory_order_relaxed) != gen) return nullptr;
  auto* b = new (std::nothrow) trace_buffer;
  trace_chunk* c = b ? new_trace_chunk() : nullptr;
  if (!c) {
    delete b;
    return nullptr;
  }
  b->head = b->tail = c;
  b->rank = s.rank();
  try {
    ss.buffers.push_back(b);
  } catch (...) {
    delete b;
    delete_chunk(c);
    return nullptr;
  }
  s.observer().trace = b;
  return b;
}

void observation_at_init(runtime_state& r) {
  if (!r.cfg().trace.empty()) start_trace(r.cfg().trace, "config::trace (WEFT_TRACE)");
}

void observation_at_finalize(runtime_state& r) noexcept {
  if (trace::active()) {
    try {
      trace::stop();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
    }
  }
  if (r.cfg().stats) {
    try {
      print_stats(std::cerr, stats());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
    }
  }
}

void observation_at_teardown() noexcept {
  session_state& ss = session();
  std::lock_guard lock(ss.mutex);
  free_buffers(ss.retired);
  drain_chunks();
}

}  // namespace weft::detail

namespace weft::detail {

void start_trace(const std::string& path, const char* who) {
  (void)rt();  // throws without a runtime
  session_state& ss = session();
  {
    std::lock_guard lock(ss.mutex);
    if (g_trace_gen.load(std::memory_order_relaxed) & 1)
      throw error(errc::invalid_state,
                  std::string("weft: ") + who + ": a trace is being recorded already");
    // Fail now rather than at the end of the run.
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) {
      throw_file_error(std::string("weft: ") + who + ": cannot create the trace file", path, errno);
    }
    std::fclose(f);
    // stop() took the last session's buffers; none joins while no session records.
    assert_invariant([&ss] { return ss.buffers.empty(); },
                     "trace: a session starts with no buffers");
    free_buffers(ss.retired);
    ss.path = path;
    ss.time0 = std::chrono::steady_clock::now();
    ss.ticks0 = trace_now();
    g_trace_gen.fetch_add(1, std::memory_order_acq_rel);
    g_watch.fetch_or(watch_trace, std::memory_order_acq_rel);
  }
  // The caller's run is under way: it begins on the trace now.
  if (stream* s = current_stream()) obs::record_current(*s);
}

}  // namespace weft::detail

namespace weft::trace {

void start(const std::string& path) {
  detail::start_trace(path, "trace::start");
}

void stop() {
  using namespace detail;
  session_state& ss = session();
  std::lock_guard lock(ss.mutex);
  if (!(g_trace_gen.load(std::memory_order_relaxed) & 1))
    throw error(errc::invalid_state, "weft: trace::stop: no trace is being recorded");
  g_trace_gen.fetch_add(1, std::memory_order_acq_rel);
  g_watch.fetch_and(static_cast<std::uint8_t>(~watch_trace), std::memory_order_acq_rel);
  std::vector<trace_buffer*> buffers = std::move(ss.buffers);
  ss.buffers.clear();
  try {
    write_session(ss, buffers);
  } catch (...) {
    ss.retired.insert(ss.retired.end(), buffers.begin(), buffers.end());
    throw;
  }
  ss.retired.insert(ss.retired.end(), buffers.begin(), buffers.end());
}

void flush() {
  using namespace detail;
  session_state& ss = session();
  std::lock_guard lock(ss.mutex);
  if (!(g_trace_gen.load(std::memory_order_relaxed) & 1))
    throw error(errc::invalid_state, "weft: trace::flush: no trace is being recorded");
  write_session(ss, ss.buffers);
}

bool active() noexcept {
  return detail::g_trace_gen.load(std::memory_order_acquire) & 1;
}

}  // namespace weft::trace
