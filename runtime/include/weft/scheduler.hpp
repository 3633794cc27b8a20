// The scheduler interface: the policy that decides what an execution stream runs next.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "weft/pool.hpp"

namespace weft {

class execution_stream;
namespace detail {
class stream;
}

/// A scheduler is a loop that pops work units from its pools and runs them. Users derive from it
/// and implement run(); the protected members are the runtime's mechanisms, valid only inside
/// run() on the stream that runs the scheduler.
///
/// Contract of run():
///  - run each popped unit with run_unit(); never run a unit twice, never drop one;
///  - call check_events() at least every event_freq() pops and whenever every pool was empty: it
///    delivers wake-ups addressed to this stream, applies requests (stop, join, scheduler
///    replacement, pools handed over from stopped streams) and may change pools();
///  - return as soon as check_events() (or has_to_stop()) says so. Units left in the pools are not
///    lost: the runtime hands them on (to the next scheduler or to other streams).
/// A scheduler runs on one stream at a time; it is owned by that stream while installed.
class scheduler {
 public:
  /// A scheduler over `pools`, in priority order as the policy sees fit. At least one pool.
  explicit scheduler(std::vector<std::shared_ptr<pool>> pools);
  virtual ~scheduler();
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  /// The scheduling loop, called on the stream's scheduler context.
  virtual void run() = 0;
  /// Where units migrating to this scheduler's stream are pushed. Default: the first pool.
  virtual pool& migration_pool() noexcept { return *pools_.front(); }

  /// The pools this scheduler serves. Changes only inside check_events().
  const std::vector<std::shared_ptr<pool>>& pools() const noexcept { return pools_; }

 protected:
  /// Runs `u` until it yields, blocks or terminates (tasklets: to completion).
  void run_unit(work_unit* u);
  /// Handles this stream's pending events; returns true when run() must return.
  bool check_events();
  /// True when run() must return: the stream is asked to stop, or to join and all pools are
  /// empty, or the scheduler is being replaced.
  bool has_to_stop() const noexcept;
  /// The stream running this scheduler.
  execution_stream& stream() const noexcept;
  /// How many pops may pass between two check_events() calls (WEFT_EVENT_FREQ).
  unsigned event_freq() const noexcept;
  /// Spin iterations before an idle loop should give its core away (WEFT_IDLE_SPIN).
  unsigned idle_spin() const noexcept;

 private:
  friend class detail::stream;
  friend class execution_stream;
  std::vector<std::shared_ptr<pool>> pools_;
  detail::stream* stream_ = nullptr;
};

/// Builds a scheduler (with its pools) for a new stream.
using scheduler_factory = std::function<std::unique_ptr<scheduler>()>;

/// Makes `name` selectable through config::scheduler and WEFT_SCHED. Replaces a previous entry.
void register_scheduler(std::string_view name, scheduler_factory factory);
/// Builds the scheduler registered as `name`; throws errc::invalid_config for an unknown name.
std::unique_ptr<scheduler> make_scheduler(std::string_view name);
/// Names of the registered schedulers, sorted.
std::vector<std::string> scheduler_names();

}  // namespace weft
