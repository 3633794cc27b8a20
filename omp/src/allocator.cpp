// OpenMP 5.1 memory allocators, as libgomp 12 implements them: the predefined allocators and
// memory spaces (all of them the system heap), omp_init_allocator with validated traits
// (alignment, pool_size, fallback, fb_data; sync_hint, access and partition accepted and not
// used), omp_alloc/omp_aligned_alloc/omp_calloc/omp_aligned_calloc/omp_realloc/omp_free, the
// default-allocator ICV, and GOMP_alloc/GOMP_free, which GCC emits for the `allocate` clause.
//
// Every block carries a header in front of it (the underlying malloc block, its size and the
// allocator that made it), so omp_free finds the allocator itself whatever handle it is given,
// as libgomp's does. An allocator with a pool_size charges each block's whole malloc size to an
// atomic budget; no allocation takes a lock.
#include "internal.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

namespace weft::omp {
namespace {

using handle = std::uintptr_t;

// omp_allocator_handle_t values of omp.h's predefined allocators.
constexpr handle null_allocator = 0;
constexpr handle default_mem_alloc = 1;
constexpr handle last_predefined = 8;  // omp_thread_mem_alloc

// omp_memspace_handle_t values.
constexpr std::uintptr_t high_bw_mem_space = 3;
constexpr std::uintptr_t low_lat_mem_space = 4;

// omp_alloctrait_key_t.
enum class trait_key : int {
  sync_hint = 1,
  alignment = 2,
  access = 3,
  pool_size = 4,
  fallback = 5,
  fb_data = 6,
  pinned = 7,
  partition = 8
};

// omp_alloctrait_value_t.
namespace atv {
constexpr std::uintptr_t default_ = ~std::uintptr_t{0};
constexpr std::uintptr_t false_ = 0;  // omp_atv_true (1) only names a pinned request, refused
constexpr std::uintptr_t contended = 3;
constexpr std::uintptr_t private_ = 6;
constexpr std::uintptr_t all = 7;
constexpr std::uintptr_t cgroup = 10;
constexpr std::uintptr_t default_mem_fb = 11;
constexpr std::uintptr_t null_fb = 12;
constexpr std::uintptr_t abort_fb = 13;
constexpr std::uintptr_t allocator_fb = 14;
constexpr std::uintptr_t environment = 15;
constexpr std::uintptr_t interleaved = 18;
}  // namespace atv

/// omp_alloctrait_t.
struct alloctrait {
  trait_key key;
  std::uintptr_t value;
};

constexpr std::size_t no_pool = ~std::size_t{0};
constexpr std::uint64_t allocator_magic = 0x7765667461616c6cULL;
constexpr std::uintptr_t block_magic = 0x6f6d70626c6f636bULL;

/// An allocator made by omp_init_allocator; its handle is its address.
struct allocator_record {
  std::uint64_t magic = allocator_magic;  ///< cleared by omp_destroy_allocator
  std::uintptr_t memspace = 0;
  std::size_t alignment = 1;         ///< a power of two, at least sizeof(void*) once made
  std::size_t pool_size = no_pool;   ///< bytes its blocks may take together; no_pool: unlimited
  std::atomic<std::size_t> used{0};  ///< bytes its live blocks take (with pool_size only)
  handle fb_data = null_allocator;   ///< the allocator_fb fallback
  std::uintptr_t fallback = atv::default_mem_fb;
  std::uintptr_t sync_hint = atv::contended;
  std::uintptr_t access = atv::all;
  std::uintptr_t partition = atv::environment;
};

/// In front of every block: 4 words, like libgomp's, so that any alignment above a word keeps
/// the header inside the malloc block.
struct block_header {
  void* base;            ///< what malloc returned
  std::size_t size;      ///< its size, charged to the allocator's pool
  handle allocator;      ///< the allocator that made the block
  std::uintptr_t check;  ///< the block's address ^ block_magic: a block of ours, not yet freed
};
static_assert(sizeof(block_header) == 4 * sizeof(void*));

constexpr std::size_t word = sizeof(void*);

std::string hex(std::uintptr_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%#lx", static_cast<unsigned long>(v));
  return buf;
}

/// The record of `a`, or null for a predefined allocator; a value that is neither stops the
/// program (a destroyed allocator or a stray number would otherwise be read as a record).
allocator_record* record_of(handle a, const char* routine) {
  if (a <= last_predefined) return nullptr;
  auto* r = reinterpret_cast<allocator_record*>(a);
  if (a < 4096 || a % alignof(allocator_record) != 0 || r->magic != allocator_magic) {
    fatal(std::string(routine) + ": " + hex(a) +
          " is not an allocator: neither a predefined one nor one made by "
          "omp_init_allocator and not yet destroyed");
  }
  return r;
}

handle default_allocator() {
  return current().icv.def_allocator;
}

/// Charges `n` bytes to `r`'s pool; false (nothing charged) when they do not fit.
bool charge(allocator_record& r, std::size_t n) {
  if (n > r.pool_size) return false;
  std::size_t used = r.used.load(std::memory_order_relaxed);
  for (;;) {
    std::size_t next;
    if (__builtin_add_overflow(used, n, &next) || next > r.pool_size) return false;
    if (r.used.compare_exchange_weak(used, next, std::memory_order_relaxed)) return true;
  }
}

void refund(allocator_record& r, std::size_t n) {
  r.used.fetch_sub(n, std::memory_order_relaxed);
}

bool has_pool(const allocator_record* r) {
  return r && r->pool_size != no_pool;
}

[[noreturn]] void out_of_memory(std::size_t size) {
  fail_exit("Out of memory allocating " + std::to_string(size) + " bytes");
}

/// Bytes to take from malloc for `size` user bytes aligned to `align` (a power of two, at least a
/// word); false on overflow.
bool block_size(std::size_t size, std::size_t align, std::size_t& total) {
  const std::size_t room = sizeof(block_header) + (align > word ? align - word : 0);
  return !__builtin_add_overflow(size, room, &total);
}

/// Places the header in the malloc block `base` of `total` bytes and returns the user pointer.
void* place(void* base, std::size_t total, std::size_t align, handle a) {
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  const std::uintptr_t p = align > word ? (b + sizeof(block_header) + align - word) & ~(align - 1)
                                        : b + sizeof(block_header);
  auto* h = reinterpret_cast<block_header*>(p) - 1;
  *h = block_header{base, total, a, p ^ block_magic};
  return reinterpret_cast<void*>(p);
}

/// The header of a block handed out by this file; anything else stops the program.
block_header& header_of(void* ptr, const char* routine) {
  auto* h = static_cast<block_header*>(ptr) - 1;
  if (h->check != (reinterpret_cast<std::uintptr_t>(ptr) ^ block_magic)) {
    fatal(std::string(routine) + ": " + hex(reinterpret_cast<std::uintptr_t>(ptr)) +
          " was not allocated by omp_alloc, omp_aligned_alloc, omp_calloc, omp_aligned_calloc, "
          "omp_realloc or an allocate clause, or was freed already");
  }
  return *h;
}

void release(block_header& h) {
  if (allocator_record* r = record_of(h.allocator, "omp_free"); has_pool(r)) refund(*r, h.size);
  void* base = h.base;
  h.check = 0;  // a second omp_free of the block is reported, not a double free
  std::free(base);
}

/// Where an allocation of `size` bytes that failed in allocator `r` goes next (libgomp's
/// fallback rules): true with `a` set to retry there, false to return null. `retry_default` says
/// the failed try asked for more (a larger alignment, or room in a pool) than the default
/// allocator would; `hops` counts allocator_fb steps.
bool fall_back(const allocator_record* r, bool retry_default, handle& a, std::size_t size,
               int& hops) {
  if (!r) return false;
  switch (r->fallback) {
    case atv::default_mem_fb:
      // The default allocator differs from this one only in alignment and pool: retrying there
      // after a plain malloc failed would fail again.
      if (!retry_default) return false;
      a = default_mem_alloc;
      return true;
    case atv::null_fb:
      return false;
    case atv::allocator_fb:
      // fb_data allocators that fall back to each other would retry forever.
      if (++hops > 64) {
        fatal("omp_alloc: the allocator_fb fallbacks from allocator " +
              hex(reinterpret_cast<std::uintptr_t>(r)) + " form a cycle, and none could allocate " +
              std::to_string(size) + " bytes");
      }
      a = r->fb_data;
      return true;
    case atv::abort_fb:
    default:
      out_of_memory(size);
  }
}

/// omp_aligned_alloc and omp_aligned_calloc (`zero`): `size` bytes, already multiplied.
void* allocate(std::size_t alignment, std::size_t size, handle a, bool zero, const char* routine) {
  if (size == 0) return nullptr;
  if (alignment > word && (alignment & (alignment - 1)) != 0) {
    fatal(std::string(routine) + ": alignment " + std::to_string(alignment) +
          " is not a power of two");
  }
  int hops = 0;
  for (;;) {
    if (a == null_allocator) a = default_allocator();
    allocator_record* r = record_of(a, routine);
    const std::size_t align = std::max({alignment, word, r ? r->alignment : 1});
    std::size_t total = 0;
    if (block_size(size, align, total)) {
      void* base = nullptr;
      if (has_pool(r)) {
        if (charge(*r, total)) {
          base = zero ? std::calloc(1, total) : std::malloc(total);
          if (!base) refund(*r, total);
        }
      } else {
        base = zero ? std::calloc(1, total) : std::malloc(total);
      }
      if (base) return place(base, total, align, a);
    }
    const bool retry_default = (align > word && align > alignment) || has_pool(r);
    if (!fall_back(r, retry_default, a, size, hops)) return nullptr;
  }
}

/// omp_realloc of a block (`ptr` not null, `size` not zero), with libgomp's rules: a null
/// `a` means the block's own allocator; the contents move to a new block unless both the old
/// and the new block have no extra alignment and the same pool (or none), where realloc grows it
/// in place.
void* reallocate(void* ptr, std::size_t size, handle a) {
  block_header& h = header_of(ptr, "omp_realloc");
  const handle old_allocator = h.allocator;
  allocator_record* old_r = record_of(old_allocator, "omp_realloc");
  const std::size_t old_offset =
      reinterpret_cast<std::uintptr_t>(ptr) - reinterpret_cast<std::uintptr_t>(h.base);
  const bool plain_old = old_offset == sizeof(block_header);
  int hops = 0;
  for (;;) {
    if (a == null_allocator) a = old_allocator;
    allocator_record* r = record_of(a, "omp_realloc");
    const std::size_t align = std::max(word, r ? r->alignment : 1);
    std::size_t total = 0;
    void* base = nullptr;
    bool in_place = false;
    if (block_size(size, align, total)) {
      if (has_pool(r)) {
        // Grown in place only within one pool: the pool is then charged the difference.
        const std::size_t kept = old_r == r && align == word && plain_old ? h.size : 0;
        bool charged;
        if (total > kept) {
          charged = charge(*r, total - kept);
        } else {
          refund(*r, kept - total);
          charged = true;
        }
        if (charged) {
          base = kept ? std::realloc(h.base, total) : std::malloc(total);
          if (!base) {
            if (total > kept) {
              refund(*r, total - kept);
            } else {
              r->used.fetch_add(kept - total, std::memory_order_relaxed);
            }
          }
          in_place = kept != 0;
        }
      } else if (align == word && plain_old && !has_pool(old_r)) {
        base = std::realloc(h.base, total);
        in_place = true;
      } else {
        base = std::malloc(total);
      }
    }
    if (base && in_place) {
      // realloc freed or kept the old block: its header is gone or rewritten here.
      return place(base, total, word, a);
    }
    if (base) {
      void* p = place(base, total, align, a);
      std::memcpy(p, ptr, std::min(size, h.size - old_offset));
      release(h);
      return p;
    }
    const bool retry_default = align > word || has_pool(r);
    if (!fall_back(r, retry_default, a, size, hops)) return nullptr;
  }
}

bool power_of_two(std::uintptr_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

/// Applies one trait to `d`; false for a key or value libgomp 12 rejects.
bool apply(allocator_record& d, const alloctrait& t) {
  const std::uintptr_t v = t.value;
  switch (t.key) {
    case trait_key::sync_hint:
      if (v == atv::default_) {
        d.sync_hint = atv::contended;
        return true;
      }
      d.sync_hint = v;
      return v >= atv::contended && v <= atv::private_;
    case trait_key::alignment:
      if (v == atv::default_) {
        d.alignment = 1;
        return true;
      }
      d.alignment = v;
      return power_of_two(v);
    case trait_key::access:
      if (v == atv::default_) {
        d.access = atv::all;
        return true;
      }
      d.access = v;
      return v >= atv::all && v <= atv::cgroup;
    case trait_key::pool_size:
      d.pool_size = v == atv::default_ ? no_pool : v;
      return true;
    case trait_key::fallback:
      if (v == atv::default_) {
        d.fallback = atv::default_mem_fb;
        return true;
      }
      d.fallback = v;
      return v >= atv::default_mem_fb && v <= atv::allocator_fb;
    case trait_key::fb_data:
      d.fb_data = v;
      return true;
    case trait_key::pinned:
      // Pinned memory is not provided (libgomp 12 neither): an allocator asking for it is
      // refused, so the program sees omp_null_allocator rather than unpinned memory.
      return v == atv::default_ || v == atv::false_;
    case trait_key::partition:
      if (v == atv::default_) {
        d.partition = atv::environment;
        return true;
      }
      d.partition = v;
      return v >= atv::environment && v <= atv::interleaved;
  }
  return false;
}

}  // namespace

handle parse_allocator_name(std::string_view name) {
  static constexpr std::string_view names[] = {"omp_default_mem_alloc", "omp_large_cap_mem_alloc",
                                               "omp_const_mem_alloc",   "omp_high_bw_mem_alloc",
                                               "omp_low_lat_mem_alloc", "omp_cgroup_mem_alloc",
                                               "omp_pteam_mem_alloc",   "omp_thread_mem_alloc"};
  for (std::size_t i = 0; i < std::size(names); ++i) {
    if (name == names[i]) return static_cast<handle>(i + 1);
  }
  return null_allocator;
}

extern "C" {

handle omp_init_allocator(std::uintptr_t memspace, int ntraits, const alloctrait* traits) {
  // High-bandwidth memory and pinning are not provided (as in libgomp 12, which has no memkind):
  // such an allocator is refused rather than made of ordinary memory.
  if (memspace > low_lat_mem_space || memspace == high_bw_mem_space) return null_allocator;
  if (ntraits > 0 && !traits) return null_allocator;
  std::unique_ptr<allocator_record> r(new (std::nothrow) allocator_record);
  if (!r) return null_allocator;
  r->memspace = memspace;
  for (int i = 0; i < ntraits; ++i) {
    if (!apply(*r, traits[i])) return null_allocator;
  }
  r->alignment = std::max(r->alignment, word);
  return reinterpret_cast<handle>(r.release());
}

void omp_destroy_allocator(handle a) {
  if (a == null_allocator) return;
  if (a <= last_predefined) {
    fatal("omp_destroy_allocator: " + std::to_string(a) + " is a predefined allocator");
  }
  allocator_record* r = record_of(a, "omp_destroy_allocator");
  r->magic = 0;
  delete r;
}

void* omp_aligned_alloc(std::size_t alignment, std::size_t size, handle a) {
  return allocate(alignment, size, a, false, "omp_aligned_alloc");
}

void* omp_alloc(std::size_t size, handle a) {
  return allocate(1, size, a, false, "omp_alloc");
}

void* omp_aligned_calloc(std::size_t alignment, std::size_t n, std::size_t size, handle a) {
  if (n == 0 || size == 0) return nullptr;
  std::size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) bytes = ~std::size_t{0};  // fails, then falls back
  return allocate(alignment, bytes, a, true, "omp_aligned_calloc");
}

void* omp_calloc(std::size_t n, std::size_t size, handle a) {
  return omp_aligned_calloc(1, n, size, a);
}

void omp_free(void* ptr, handle) {
  if (!ptr) return;
  release(header_of(ptr, "omp_free"));
}

void* omp_realloc(void* ptr, std::size_t size, handle a, handle free_allocator) {
  if (!ptr) return allocate(1, size, a, false, "omp_realloc");
  if (size == 0) {
    omp_free(ptr, free_allocator);
    return nullptr;
  }
  return reallocate(ptr, size, a);
}

void omp_set_default_allocator(handle a) {
  record_of(a, "omp_set_default_allocator");
  current().icv.def_allocator = a == null_allocator ? default_mem_alloc : a;
}

handle omp_get_default_allocator(void) {
  return default_allocator();
}

// The allocate clause: as omp_aligned_alloc, but a null_fb allocator that cannot allocate ends
// the program as abort_fb would (OpenMP 5.1, 2.13.2).
void* GOMP_alloc(std::size_t alignment, std::size_t size, handle a) {
  void* p = allocate(alignment, size, a, false, "GOMP_alloc");
  if (!p && size) out_of_memory(size);
  return p;
}

void GOMP_free(void* ptr, handle a) {
  omp_free(ptr, a);
}

}  // extern "C"

}  // namespace weft::omp
