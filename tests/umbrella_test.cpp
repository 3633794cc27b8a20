// SPDX-License-Identifier: Apache-2.0
// weft/weft.hpp alone gives every public header: this file includes no other weft header and names
// one declaration of each (a header weft.hpp leaves out fails to compile here). The companion ctest
// umbrella_header_lists_every_header (umbrella_check.cmake) finds headers added later.
#include <weft/weft.hpp>

#include <gtest/gtest.h>

#include <ostream>
#include <string_view>
#include <type_traits>
#include <utility>

namespace {

template <class... T>
constexpr bool all_declared = ((sizeof(T*) > 0) && ...);

// One type per header, in the order of runtime/include/weft/ and schedulers/include/weft/.
static_assert(all_declared<weft::barrier,                          // barrier.hpp
                           weft::channel<int>,                     // channel.hpp
                           weft::condition_variable,               // condition_variable.hpp
                           weft::config,                           // config.hpp
                           weft::errc,                             // error.hpp
                           weft::event_registration,               // events.hpp
                           weft::eventual<int>,                    // eventual.hpp
                           weft::execution_stream,                 // execution_stream.hpp
                           weft::ext::named_scheduler,             // ext/defaults.hpp
                           weft::ext::lock_guard<weft::spinlock>,  // ext/locks.hpp
                           weft::ext::maybe_lock<true>,            // ext/locks.hpp
                           weft::ext::unit_list,                   // ext/unit_list.hpp
                           weft::future<int>,                      // future.hpp
                           weft::mutex,                            // mutex.hpp
                           weft::pool,                             // pool.hpp
                           weft::rm::command,                      // rm_protocol.hpp
                           weft::rwlock,                           // rwlock.hpp
                           weft::scheduler,                        // scheduler.hpp
                           weft::binary_semaphore,                 // semaphore.hpp
                           weft::spinlock,                         // spinlock.hpp
                           weft::runtime_stats,                    // stats.hpp
                           weft::task_group,                       // task_group.hpp
                           weft::tasklet,                          // tasklet.hpp
                           weft::ult,                              // ult.hpp
                           weft::unit_handle,                      // unit_handle.hpp
                           weft::local_key,                        // unit_local.hpp
                           weft::wait_queue,                       // wait_queue.hpp
                           weft::work_unit,                        // work_unit.hpp
                           weft::basic_scheduler,                  // schedulers/basic_scheduler.hpp
                           weft::prio_scheduler,                   // schedulers/prio_scheduler.hpp
                           weft::priority_pool,                    // schedulers/priority_pool.hpp
                           weft::randws_scheduler,  // schedulers/randws_scheduler.hpp
                           weft::ws_pool>);         // schedulers/ws_pool.hpp

// Headers that declare functions only: their calls must resolve through weft.hpp (unevaluated).
using functions_declared =
    decltype(weft::dump_units(std::declval<std::ostream&>()),             // debug.hpp
             weft::ext::assert_invariant([] { return true; }, ""),        // ext/assert.hpp
             weft::ext::note_steal_attempt(),                             // ext/observe.hpp
             weft::ext::futex_wake(nullptr),                              // ext/park.hpp
             weft::ext::on_stream(),                                      // ext/stream.hpp
             weft::init(),                                                // runtime.hpp
             weft::push_scheduler(std::declval<weft::pool&>(), nullptr),  // stacking.hpp
             weft::this_unit::yield(),                                    // this_unit.hpp
             weft::trace::start(""),                                      // trace.hpp
             weft::make_fifo_pool(),  // schedulers/fifo_pool.hpp
             weft::make_lifo_pool(),  // schedulers/lifo_pool.hpp
             weft::version());        // version.hpp
static_assert(std::is_same_v<functions_declared, std::string_view>);

TEST(UmbrellaTest, VersionMatchesTheHeaders) {
  // What the static_asserts above check is done at compile time; this only gives the file a test.
  EXPECT_EQ(weft::version(), WEFT_VERSION_STRING);
}

}  // namespace
