#include "stack.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "sanitizer.hpp"
#include "weft/error.hpp"

namespace weft::detail {

namespace {
constexpr std::uint64_t canary_value = 0x5745465453544b21ull;  // "WEFTSTK!"
std::atomic<bool> warned_no_guard{false};
}  // namespace

std::size_t page_size() noexcept {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

std::size_t round_to_pages(std::size_t bytes) noexcept {
  const std::size_t page = page_size();
  if (bytes == 0) return page;
  return (bytes + page - 1) / page * page;
}

stack_region map_stack(std::size_t size) {
  const std::size_t page = page_size();
  size = round_to_pages(size);
  void* base = mmap(nullptr, size + page, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (base == MAP_FAILED) {
    throw error(errc::resource,
                std::string("weft: cannot map a ULT stack: ") + std::strerror(errno));
  }
  stack_region s;
  s.lo = static_cast<char*>(base) + page;
  s.size = size;
  if (mprotect(base, page, PROT_NONE) == 0) {
    s.flags = stack_guarded;
  } else {
    // Each guard page splits the mapping; past vm.max_map_count the kernel refuses. A canary
    // still turns an overflow into a clear report instead of silent corruption.
    s.flags = stack_canary;
    std::memcpy(s.lo, &canary_value, sizeof canary_value);
    if (!warned_no_guard.exchange(true)) {
      std::fprintf(stderr,
                   "weft: warning: cannot add more stack guard pages (%s; see vm.max_map_count); "
                   "further ULT stacks are checked with canaries instead\n",
                   std::strerror(errno));
    }
  }
  s.tsan_fiber = tsan_create_fiber();
  return s;
}

void set_user_stack(work_unit* u, void* lo, std::size_t size) noexcept {
  u->stack = {lo, size, tsan_create_fiber(), stack_user};
}

void unmap_stack(const stack_region& s) noexcept {
  if (s.flags & stack_foreign) return;
  tsan_destroy_fiber(s.tsan_fiber);
  asan_unpoison(s.lo, s.size);
  const std::size_t page = page_size();
  munmap(static_cast<char*>(s.lo) - page, s.size + page);
}

bool stack_intact(const stack_region& s) noexcept {
  if (!(s.flags & stack_canary)) return true;
  std::uint64_t word;
  std::memcpy(&word, s.lo, sizeof word);
  return word == canary_value;
}

void stack_cache::clear() noexcept {
  for (std::size_t i = 0; i < count_; ++i) unmap_stack(free_[i].stack);
  count_ = 0;
}

}  // namespace weft::detail
