// SPDX-License-Identifier: Apache-2.0
/*
 * abt.h: weft's Argobots-compatible C API.
 *
 * This header gives C (C99 or later) and C++ programs written for Argobots 1.2 the names, types,
 * constants, error codes and function signatures they expect, so that they build unchanged and
 * link against libweft-abt instead of libabt. Every function is implemented by weft's C++
 * runtime (execution streams, ULTs, tasklets, pools, schedulers); docs/abt.md says how each group
 * maps onto it and where weft's behaviour differs from Argobots'.
 *
 * Conventions, as in Argobots: every function returns ABT_SUCCESS (0) or an ABT_ERR_* code;
 * handles are opaque pointers whose null value is the matching ABT_*_NULL; output arguments are
 * written only on success unless the function documents otherwise.
 */
#ifndef WEFT_ABT_H_INCLUDED
#define WEFT_ABT_H_INCLUDED
/* Argobots' own include guard, so code that tests for it sees the API as present. */
#ifndef ABT_H_INCLUDED
#define ABT_H_INCLUDED
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

/* Named before use so the prototypes that take one compile under strict -std=c99 too, where
 * <time.h> does not define it. */
struct timespec;

#if defined(__GNUC__) || defined(__clang__)
#define ABT_API_PUBLIC __attribute__((visibility("default")))
#define ABT_DEPRECATED __attribute__((deprecated))
#else
#define ABT_API_PUBLIC
#define ABT_DEPRECATED
#endif

#if defined(__cplusplus)
extern "C" {
#endif

/* ======================================================================================== */
/* Version                                                                                   */
/* ======================================================================================== */

/* The Argobots API version this header implements (not weft's own version). */
#define ABT_VERSION "1.2"
#define ABT_RELEASE_TYPE_ALPHA 0
#define ABT_RELEASE_TYPE_BETA 1
#define ABT_RELEASE_TYPE_RC 2
#define ABT_RELEASE_TYPE_PATCH 3
/* MAJ * 10000000 + MIN * 100000 + REV * 1000 + TYPE * 100 + PATCH. */
#define ABT_CALC_VERSION(MAJOR, MINOR, REVISION, TYPE, PATCH) \
  (((MAJOR)*10000000) + ((MINOR)*100000) + ((REVISION)*1000) + ((TYPE)*100) + (PATCH))
/* The value Argobots 1.2's own abt.h carries (its build encodes the release as 1.2.0, RC type,
 * patch 1): programs that compare against ABT_NUMVERSION see the number they see there. */
#define ABT_NUMVERSION 10200201
/* Marks weft's implementation, for programs that want to know what they run on. */
#define ABT_WEFT 1

/* ======================================================================================== */
/* Error codes (Argobots' values)                                                            */
/* ======================================================================================== */

#define ABT_SUCCESS 0                 /* success; guaranteed to be 0 */
#define ABT_ERR_UNINITIALIZED 1       /* the runtime is not initialised */
#define ABT_ERR_MEM 2                 /* an allocation failed */
#define ABT_ERR_OTHER 3               /* an error no other code describes */
#define ABT_ERR_INV_XSTREAM 4         /* invalid execution stream */
#define ABT_ERR_INV_XSTREAM_RANK 5    /* invalid execution stream rank */
#define ABT_ERR_INV_XSTREAM_BARRIER 6 /* invalid execution-stream barrier */
#define ABT_ERR_INV_SCHED 7           /* invalid scheduler */
#define ABT_ERR_INV_SCHED_KIND 8      /* invalid scheduler kind */
#define ABT_ERR_INV_SCHED_PREDEF 9    /* invalid predefined scheduler */
#define ABT_ERR_INV_SCHED_TYPE 10     /* unused (deprecated) */
#define ABT_ERR_INV_SCHED_CONFIG 11   /* invalid scheduler configuration */
#define ABT_ERR_INV_POOL 12           /* invalid pool */
#define ABT_ERR_INV_POOL_KIND 13      /* invalid pool kind */
#define ABT_ERR_INV_POOL_ACCESS 14    /* invalid pool access mode */
#define ABT_ERR_INV_UNIT 15           /* invalid scheduling unit */
#define ABT_ERR_INV_THREAD 16         /* invalid work unit */
#define ABT_ERR_INV_THREAD_ATTR 17    /* invalid ULT attribute */
#define ABT_ERR_INV_TASK 18           /* invalid tasklet */
#define ABT_ERR_INV_KEY 19            /* invalid work-unit-specific data key */
#define ABT_ERR_INV_MUTEX 20          /* invalid mutex */
#define ABT_ERR_INV_MUTEX_ATTR 21     /* invalid mutex attribute */
#define ABT_ERR_INV_COND 22           /* invalid condition variable */
#define ABT_ERR_INV_RWLOCK 23         /* invalid readers-writer lock */
#define ABT_ERR_INV_EVENTUAL 24       /* invalid eventual */
#define ABT_ERR_INV_FUTURE 25         /* invalid future */
#define ABT_ERR_INV_BARRIER 26        /* invalid barrier */
#define ABT_ERR_INV_TIMER 27          /* invalid timer */
#define ABT_ERR_INV_QUERY_KIND 28     /* invalid query kind */
#define ABT_ERR_XSTREAM 29            /* error related to an execution stream */
#define ABT_ERR_XSTREAM_STATE 30      /* execution stream in the wrong state */
#define ABT_ERR_XSTREAM_BARRIER 31    /* error related to an execution-stream barrier */
#define ABT_ERR_SCHED 32              /* error related to a scheduler */
#define ABT_ERR_SCHED_CONFIG 33       /* error related to a scheduler configuration */
#define ABT_ERR_POOL 34               /* error related to a pool */
#define ABT_ERR_UNIT 35               /* error related to a scheduling unit */
#define ABT_ERR_THREAD 36             /* error related to a work unit */
#define ABT_ERR_TASK 37               /* error related to a tasklet */
#define ABT_ERR_KEY 38                /* error related to a key */
#define ABT_ERR_MUTEX 39              /* error related to a mutex */
#define ABT_ERR_MUTEX_LOCKED 40       /* ABT_mutex_trylock: the mutex is held */
#define ABT_ERR_COND 41               /* error related to a condition variable */
#define ABT_ERR_COND_TIMEDOUT 42      /* ABT_cond_timedwait: the deadline passed */
#define ABT_ERR_RWLOCK 43             /* error related to a readers-writer lock */
#define ABT_ERR_EVENTUAL 44           /* error related to an eventual */
#define ABT_ERR_FUTURE 45             /* error related to a future */
#define ABT_ERR_BARRIER 46            /* error related to a barrier */
#define ABT_ERR_TIMER 47              /* error related to a timer */
#define ABT_ERR_MIGRATION_TARGET 48   /* invalid migration target */
#define ABT_ERR_MIGRATION_NA 49       /* migration is not possible */
#define ABT_ERR_MISSING_JOIN 50       /* unused (deprecated) */
#define ABT_ERR_FEATURE_NA 51         /* the feature is not available */
#define ABT_ERR_INV_TOOL_CONTEXT 52   /* invalid tool context */
#define ABT_ERR_INV_ARG 53            /* invalid user argument */
#define ABT_ERR_SYS 54                /* a system call or library call failed */
#define ABT_ERR_CPUID 55              /* invalid CPU id */
#define ABT_ERR_INV_POOL_CONFIG 56    /* invalid pool configuration */
#define ABT_ERR_INV_POOL_USER_DEF 57  /* invalid pool definition */

/* ======================================================================================== */
/* Booleans and miscellaneous constants                                                      */
/* ======================================================================================== */

/* ABT_bool holds ABT_TRUE or ABT_FALSE; ABT_FALSE is 0. */
typedef int ABT_bool;
#define ABT_TRUE 1
#define ABT_FALSE 0
/* Unused by any function; kept for source compatibility. */
#define ABT_XSTREAM_ANY_RANK -1

/* ======================================================================================== */
/* Enumerations                                                                              */
/* ======================================================================================== */

/* Life cycle of an execution stream. */
enum ABT_xstream_state { ABT_XSTREAM_STATE_RUNNING, ABT_XSTREAM_STATE_TERMINATED };
typedef enum ABT_xstream_state ABT_xstream_state;

/* Life cycle of a work unit (ULT or tasklet). */
enum ABT_thread_state {
  ABT_THREAD_STATE_READY,
  ABT_THREAD_STATE_RUNNING,
  ABT_THREAD_STATE_BLOCKED,
  ABT_THREAD_STATE_TERMINATED
};
typedef enum ABT_thread_state ABT_thread_state;

/* Life cycle of a tasklet, kept for the ABT_task_* functions. */
enum ABT_task_state { ABT_TASK_STATE_READY, ABT_TASK_STATE_RUNNING, ABT_TASK_STATE_TERMINATED };
typedef enum ABT_task_state ABT_task_state;

/* Unused by any function; kept for source compatibility. */
enum ABT_sched_state {
  ABT_SCHED_STATE_READY,
  ABT_SCHED_STATE_RUNNING,
  ABT_SCHED_STATE_STOPPED,
  ABT_SCHED_STATE_TERMINATED
};
typedef enum ABT_sched_state ABT_sched_state;

/* The predefined schedulers. DEFAULT is BASIC. */
enum ABT_sched_predef {
  ABT_SCHED_DEFAULT,
  ABT_SCHED_BASIC,
  ABT_SCHED_PRIO,
  ABT_SCHED_RANDWS,
  ABT_SCHED_BASIC_WAIT
};
typedef enum ABT_sched_predef ABT_sched_predef;

/* The work unit a scheduler runs as; ignored (a stacked scheduler always runs as a ULT). */
enum ABT_sched_type { ABT_SCHED_TYPE_ULT, ABT_SCHED_TYPE_TASK };
typedef enum ABT_sched_type ABT_sched_type;

/* The predefined pools. */
enum ABT_pool_kind {
  ABT_POOL_FIFO,      /* first in, first out */
  ABT_POOL_FIFO_WAIT, /* FIFO whose pop_wait sleeps until a push */
  ABT_POOL_RANDWS     /* work-stealing deque, for ABT_SCHED_RANDWS */
};
typedef enum ABT_pool_kind ABT_pool_kind;

/* Which execution streams may push to and pop from a pool at the same time. */
enum ABT_pool_access {
  ABT_POOL_ACCESS_PRIV, /* one stream pushes and pops */
  ABT_POOL_ACCESS_SPSC, /* one producer stream, one consumer stream */
  ABT_POOL_ACCESS_MPSC, /* any producer, one consumer stream */
  ABT_POOL_ACCESS_SPMC, /* one producer stream, any consumer */
  ABT_POOL_ACCESS_MPMC  /* no restriction */
};
typedef enum ABT_pool_access ABT_pool_access;

/* What kind of entity a caller (or a scheduling unit) is. */
enum ABT_unit_type {
  ABT_UNIT_TYPE_THREAD,  /* a ULT */
  ABT_UNIT_TYPE_TASK,    /* a tasklet */
  ABT_UNIT_TYPE_XSTREAM, /* unused */
  ABT_UNIT_TYPE_EXT      /* an external thread */
};
typedef enum ABT_unit_type ABT_unit_type;

/* What ABT_info_query_config reports. The value type is ABT_bool unless noted. */
enum ABT_info_query_kind {
  ABT_INFO_QUERY_KIND_ENABLED_DEBUG,
  ABT_INFO_QUERY_KIND_ENABLED_PRINT_ERRNO,
  ABT_INFO_QUERY_KIND_ENABLED_LOG,
  ABT_INFO_QUERY_KIND_ENABLED_VALGRIND,
  ABT_INFO_QUERY_KIND_ENABLED_CHECK_ERROR,
  ABT_INFO_QUERY_KIND_ENABLED_CHECK_POOL_PRODUCER,
  ABT_INFO_QUERY_KIND_ENABLED_CHECK_POOL_CONSUMER,
  ABT_INFO_QUERY_KIND_ENABLED_PRESERVE_FPU,
  ABT_INFO_QUERY_KIND_ENABLED_THREAD_CANCEL,
  ABT_INFO_QUERY_KIND_ENABLED_TASK_CANCEL,
  ABT_INFO_QUERY_KIND_ENABLED_MIGRATION,
  ABT_INFO_QUERY_KIND_ENABLED_STACKABLE_SCHED,
  ABT_INFO_QUERY_KIND_ENABLED_EXTERNAL_THREAD,
  ABT_INFO_QUERY_KIND_ENABLED_SCHED_SLEEP,
  ABT_INFO_QUERY_KIND_ENABLED_PRINT_CONFIG,
  ABT_INFO_QUERY_KIND_ENABLED_AFFINITY,
  ABT_INFO_QUERY_KIND_MAX_NUM_XSTREAMS,         /* int */
  ABT_INFO_QUERY_KIND_DEFAULT_THREAD_STACKSIZE, /* size_t */
  ABT_INFO_QUERY_KIND_DEFAULT_SCHED_STACKSIZE,  /* size_t */
  ABT_INFO_QUERY_KIND_DEFAULT_SCHED_EVENT_FREQ, /* uint64_t */
  ABT_INFO_QUERY_KIND_DEFAULT_SCHED_SLEEP_NSEC, /* uint64_t */
  ABT_INFO_QUERY_KIND_ENABLED_TOOL,
  ABT_INFO_QUERY_KIND_FCONTEXT,
  ABT_INFO_QUERY_KIND_DYNAMIC_PROMOTION,
  ABT_INFO_QUERY_KIND_ENABLED_STACK_UNWIND,
  ABT_INFO_QUERY_KIND_ENABLED_STACK_OVERFLOW_CHECK, /* int: 0 none, 1 canary, 2/3 guard page */
  ABT_INFO_QUERY_KIND_WAIT_POLICY,                  /* int: 0 passive, 1 active */
  ABT_INFO_QUERY_KIND_ENABLED_LAZY_STACK_ALLOC
};
typedef enum ABT_info_query_kind ABT_info_query_kind;

/* What ABT_tool_query_thread reports about an event. */
enum ABT_tool_query_kind {
  ABT_TOOL_QUERY_KIND_POOL,              /* ABT_pool: where the unit is or will be pushed */
  ABT_TOOL_QUERY_KIND_STACK_DEPTH,       /* int: depth of stacked work units */
  ABT_TOOL_QUERY_KIND_CALLER_TYPE,       /* ABT_exec_entity_type of the caller */
  ABT_TOOL_QUERY_KIND_CALLER_HANDLE,     /* ABT_thread (or NULL for an external thread) */
  ABT_TOOL_QUERY_KIND_SYNC_OBJECT_TYPE,  /* ABT_sync_event_type */
  ABT_TOOL_QUERY_KIND_SYNC_OBJECT_HANDLE /* void *: the synchronisation object */
};
typedef enum ABT_tool_query_kind ABT_tool_query_kind;

/* The kind of entity that caused a tool event. */
enum ABT_exec_entity_type { ABT_EXEC_ENTITY_TYPE_EXT, ABT_EXEC_ENTITY_TYPE_THREAD };
typedef enum ABT_exec_entity_type ABT_exec_entity_type;

/* Why a work unit blocked or was switched, as reported to tools. */
enum ABT_sync_event_type {
  ABT_SYNC_EVENT_TYPE_UNKNOWN = 0,
  ABT_SYNC_EVENT_TYPE_USER,
  ABT_SYNC_EVENT_TYPE_OTHER,
  ABT_SYNC_EVENT_TYPE_XSTREAM_JOIN,
  ABT_SYNC_EVENT_TYPE_THREAD_JOIN,
  ABT_SYNC_EVENT_TYPE_MUTEX,
  ABT_SYNC_EVENT_TYPE_COND,
  ABT_SYNC_EVENT_TYPE_RWLOCK,
  ABT_SYNC_EVENT_TYPE_EVENTUAL,
  ABT_SYNC_EVENT_TYPE_FUTURE,
  ABT_SYNC_EVENT_TYPE_BARRIER
};
typedef enum ABT_sync_event_type ABT_sync_event_type;

/* Tool event mask bits for ABT_tool_register_thread_callback. */
#define ABT_TOOL_EVENT_THREAD_NONE (0)
#define ABT_TOOL_EVENT_THREAD_CREATE (1 << 0)
#define ABT_TOOL_EVENT_THREAD_JOIN (1 << 1)
#define ABT_TOOL_EVENT_THREAD_FREE (1 << 2)
#define ABT_TOOL_EVENT_THREAD_REVIVE (1 << 3)
#define ABT_TOOL_EVENT_THREAD_RUN (1 << 4)
#define ABT_TOOL_EVENT_THREAD_FINISH (1 << 5)
#define ABT_TOOL_EVENT_THREAD_CANCEL (1 << 6)
#define ABT_TOOL_EVENT_THREAD_YIELD (1 << 7)
#define ABT_TOOL_EVENT_THREAD_SUSPEND (1 << 8)
#define ABT_TOOL_EVENT_THREAD_RESUME (1 << 9)
#define ABT_TOOL_EVENT_THREAD_ALL ((uint64_t)((1 << 12) - 1))

/* ======================================================================================== */
/* Handles                                                                                   */
/* ======================================================================================== */

struct ABT_xstream_opaque;
struct ABT_xstream_barrier_opaque;
struct ABT_sched_opaque;
struct ABT_sched_config_opaque;
struct ABT_pool_opaque;
struct ABT_pool_config_opaque;
struct ABT_pool_def;
struct ABT_unit_opaque;
struct ABT_thread_opaque;
struct ABT_thread_attr_opaque;
struct ABT_key_opaque;
struct ABT_mutex_opaque;
struct ABT_mutex_attr_opaque;
struct ABT_cond_opaque;
struct ABT_rwlock_opaque;
struct ABT_eventual_opaque;
struct ABT_future_opaque;
struct ABT_barrier_opaque;
struct ABT_timer_opaque;
struct ABT_tool_context_opaque;

typedef struct ABT_xstream_opaque* ABT_xstream;                 /* execution stream */
typedef struct ABT_xstream_barrier_opaque* ABT_xstream_barrier; /* barrier between streams */
typedef struct ABT_sched_opaque* ABT_sched;                     /* scheduler */
typedef struct ABT_sched_config_opaque* ABT_sched_config;       /* scheduler configuration */
typedef struct ABT_pool_opaque* ABT_pool;                       /* pool */
typedef struct ABT_pool_config_opaque* ABT_pool_config;         /* pool configuration */
/* A pool definition. Both the old struct (ABT_pool_def, passed by address) and the one built
 * by ABT_pool_user_def_create are accepted wherever an ABT_pool_user_def is. */
typedef struct ABT_pool_def* ABT_pool_user_def;
typedef struct ABT_unit_opaque* ABT_unit;               /* a work unit as a pool stores it */
typedef uint64_t ABT_unit_id;                           /* work unit id */
typedef struct ABT_thread_opaque* ABT_thread;           /* work unit (ULT or tasklet) */
typedef struct ABT_thread_attr_opaque* ABT_thread_attr; /* ULT creation attributes */
typedef ABT_unit_id ABT_thread_id;                      /* work unit id */
typedef struct ABT_thread_opaque* ABT_task;             /* tasklet: the same handle type */
typedef struct ABT_key_opaque* ABT_key;                 /* work-unit-specific data key */
typedef struct ABT_mutex_opaque* ABT_mutex;
typedef struct ABT_mutex_attr_opaque* ABT_mutex_attr;
typedef struct ABT_cond_opaque* ABT_cond;
typedef struct ABT_rwlock_opaque* ABT_rwlock;
typedef struct ABT_eventual_opaque* ABT_eventual;
typedef struct ABT_future_opaque* ABT_future;
typedef struct ABT_barrier_opaque* ABT_barrier;
typedef struct ABT_timer_opaque* ABT_timer;
typedef struct ABT_tool_context_opaque* ABT_tool_context; /* an event, for ABT_tool_query_thread */

/* Null handles. */
#define ABT_NULL 1
#define ABT_XSTREAM_NULL ((ABT_xstream)NULL)
#define ABT_XSTREAM_BARRIER_NULL ((ABT_xstream_barrier)NULL)
#define ABT_SCHED_NULL ((ABT_sched)NULL)
#define ABT_SCHED_CONFIG_NULL ((ABT_sched_config)NULL)
#define ABT_POOL_NULL ((ABT_pool)NULL)
#define ABT_POOL_CONFIG_NULL ((ABT_pool_config)NULL)
#define ABT_POOL_USER_DEF_NULL ((ABT_pool_user_def)NULL)
#define ABT_UNIT_NULL ((ABT_unit)NULL)
#define ABT_THREAD_NULL ((ABT_thread)NULL)
#define ABT_THREAD_ATTR_NULL ((ABT_thread_attr)NULL)
#define ABT_TASK_NULL ((ABT_task)NULL)
#define ABT_KEY_NULL ((ABT_key)NULL)
#define ABT_MUTEX_NULL ((ABT_mutex)NULL)
#define ABT_MUTEX_ATTR_NULL ((ABT_mutex_attr)NULL)
#define ABT_COND_NULL ((ABT_cond)NULL)
#define ABT_RWLOCK_NULL ((ABT_rwlock)NULL)
#define ABT_EVENTUAL_NULL ((ABT_eventual)NULL)
#define ABT_FUTURE_NULL ((ABT_future)NULL)
#define ABT_BARRIER_NULL ((ABT_barrier)NULL)
#define ABT_TIMER_NULL ((ABT_timer)NULL)
#define ABT_TOOL_CONTEXT_NULL ((ABT_tool_context)NULL)

/* ======================================================================================== */
/* Scheduler definitions and configurations                                                  */
/* ======================================================================================== */

/* Type of a configuration variable. */
typedef enum {
  ABT_SCHED_CONFIG_INT = 0,    /* int */
  ABT_SCHED_CONFIG_DOUBLE = 1, /* double */
  ABT_SCHED_CONFIG_PTR = 2     /* void * */
} ABT_sched_config_type;

/* Names a scheduler configuration variable: its index (>= 0) and its type. */
typedef struct {
  int idx;
  ABT_sched_config_type type;
} ABT_sched_config_var;

/* Ends the variable list of ABT_sched_config_create. Not to be modified. */
extern ABT_API_PUBLIC ABT_sched_config_var ABT_sched_config_var_end;
/* int: how many pops between two event checks of a predefined scheduler. */
extern ABT_API_PUBLIC ABT_sched_config_var ABT_sched_basic_freq;
/* int: accepted and ignored, as in Argobots. */
extern ABT_API_PUBLIC ABT_sched_config_var ABT_sched_config_access;
/* int: non-zero frees the scheduler automatically with the stream or pool that owns it. */
extern ABT_API_PUBLIC ABT_sched_config_var ABT_sched_config_automatic;

/* Callbacks of a user-defined scheduler. */
typedef int (*ABT_sched_init_fn)(ABT_sched, ABT_sched_config);
typedef void (*ABT_sched_run_fn)(ABT_sched);
typedef int (*ABT_sched_free_fn)(ABT_sched);
typedef ABT_pool (*ABT_sched_get_migr_pool_fn)(ABT_sched);

/* A user-defined scheduler. run is required; init, free and get_migr_pool may be NULL.
 * run loops: pop units from the scheduler's pools (ABT_sched_get_pools), run each with
 * ABT_xstream_run_unit, call ABT_xstream_check_events every few pops, and return when
 * ABT_sched_has_to_stop says so. */
typedef struct {
  ABT_sched_type type; /* ignored */
  ABT_sched_init_fn init;
  ABT_sched_run_fn run;
  ABT_sched_free_fn free;
  ABT_sched_get_migr_pool_fn get_migr_pool;
} ABT_sched_def;

/* ======================================================================================== */
/* Pool definitions and configurations                                                       */
/* ======================================================================================== */

/* Type of a pool configuration variable. */
typedef enum {
  ABT_POOL_CONFIG_INT = 0,
  ABT_POOL_CONFIG_DOUBLE = 1,
  ABT_POOL_CONFIG_PTR = 2
} ABT_pool_config_type;

/* Names a pool configuration variable: its key (>= 0; negative keys are reserved). */
typedef struct {
  int key;
  ABT_pool_config_type type;
} ABT_pool_config_var;

/* int: non-zero frees the pool automatically with the last scheduler that uses it. */
extern ABT_API_PUBLIC const ABT_pool_config_var ABT_pool_config_automatic;

/* A hint given to a pool operation: a priority, an ownership and an operation, or-ed. */
typedef uint64_t ABT_pool_context;
#define ABT_POOL_CONTEXT_PRIO_DEFAULT_PRIO ((ABT_pool_context)0x0)
#define ABT_POOL_CONTEXT_PRIO_HIGH_PRIO ((ABT_pool_context)0x1)
#define ABT_POOL_CONTEXT_PRIO_LOW_PRIO ((ABT_pool_context)0x2)
#define ABT_POOL_CONTEXT_OWNER_DEFAULT ((ABT_pool_context)0x0)
#define ABT_POOL_CONTEXT_OWNER_PRIMARY ((ABT_pool_context)0x100)
#define ABT_POOL_CONTEXT_OWNER_SECONDARY ((ABT_pool_context)0x200)
#define ABT_POOL_CONTEXT_OP_POOL_OTHER ((ABT_pool_context)0x0)
#define ABT_POOL_CONTEXT_OP_THREAD_CREATE ((ABT_pool_context)0x1000)
#define ABT_POOL_CONTEXT_OP_THREAD_CREATE_TO ((ABT_pool_context)0x2000)
#define ABT_POOL_CONTEXT_OP_THREAD_REVIVE ((ABT_pool_context)0x4000)
#define ABT_POOL_CONTEXT_OP_THREAD_REVIVE_TO ((ABT_pool_context)0x8000)
#define ABT_POOL_CONTEXT_OP_THREAD_YIELD ((ABT_pool_context)0x10000)
#define ABT_POOL_CONTEXT_OP_THREAD_YIELD_TO ((ABT_pool_context)0x20000)
#define ABT_POOL_CONTEXT_OP_THREAD_RESUME_YIELD_TO ((ABT_pool_context)0x40000)
#define ABT_POOL_CONTEXT_OP_THREAD_YIELD_LOOP ((ABT_pool_context)0x80000)
#define ABT_POOL_CONTEXT_OP_THREAD_RESUME ((ABT_pool_context)0x100000)
#define ABT_POOL_CONTEXT_OP_THREAD_MIGRATE ((ABT_pool_context)0x200000)

/* Callbacks of a pool built with ABT_pool_user_def_create (the 1.2 interface). A unit the pool
 * stores is an ABT_unit the pool made from an ABT_thread with create_unit; pops return the
 * ABT_thread (ABT_THREAD_NULL when empty). create_unit, free_unit, is_empty, pop and push are
 * required; the others are set with ABT_pool_user_def_set_*. */
typedef ABT_unit (*ABT_pool_user_create_unit_fn)(ABT_pool, ABT_thread);
typedef void (*ABT_pool_user_free_unit_fn)(ABT_pool, ABT_unit);
typedef ABT_bool (*ABT_pool_user_is_empty_fn)(ABT_pool);
typedef ABT_thread (*ABT_pool_user_pop_fn)(ABT_pool, ABT_pool_context);
typedef void (*ABT_pool_user_push_fn)(ABT_pool, ABT_unit, ABT_pool_context);
typedef int (*ABT_pool_user_init_fn)(ABT_pool, ABT_pool_config);
typedef void (*ABT_pool_user_free_fn)(ABT_pool);
typedef size_t (*ABT_pool_user_get_size_fn)(ABT_pool);
typedef ABT_thread (*ABT_pool_user_pop_wait_fn)(ABT_pool, double, ABT_pool_context);
typedef void (*ABT_pool_user_pop_many_fn)(ABT_pool, ABT_thread*, size_t, size_t*, ABT_pool_context);
typedef void (*ABT_pool_user_push_many_fn)(ABT_pool, const ABT_unit*, size_t, ABT_pool_context);
typedef void (*ABT_pool_user_print_all_fn)(ABT_pool, void* arg, void (*)(void*, ABT_thread));

/* Callbacks of the older pool interface (struct ABT_pool_def). */
typedef ABT_unit_type (*ABT_unit_get_type_fn)(ABT_unit);
typedef ABT_thread (*ABT_unit_get_thread_fn)(ABT_unit);
typedef ABT_task (*ABT_unit_get_task_fn)(ABT_unit);
typedef ABT_bool (*ABT_unit_is_in_pool_fn)(ABT_unit);
typedef ABT_unit (*ABT_unit_create_from_thread_fn)(ABT_thread);
typedef ABT_unit (*ABT_unit_create_from_task_fn)(ABT_task);
typedef void (*ABT_unit_free_fn)(ABT_unit*);
typedef int (*ABT_pool_init_fn)(ABT_pool, ABT_pool_config);
typedef size_t (*ABT_pool_get_size_fn)(ABT_pool);
typedef void (*ABT_pool_push_fn)(ABT_pool, ABT_unit);
typedef ABT_unit (*ABT_pool_pop_fn)(ABT_pool);
typedef ABT_unit (*ABT_pool_pop_wait_fn)(ABT_pool, double);
typedef ABT_unit (*ABT_pool_pop_timedwait_fn)(ABT_pool, double);
typedef int (*ABT_pool_remove_fn)(ABT_pool, ABT_unit);
typedef int (*ABT_pool_free_fn)(ABT_pool);
typedef int (*ABT_pool_print_all_fn)(ABT_pool, void* arg, void (*)(void*, ABT_unit));

/* The older pool interface: a struct of callbacks passed by address to ABT_pool_create.
 * Required: u_create_from_thread, u_free, p_get_size, p_push, p_pop. Optional (may be NULL):
 * u_is_in_pool, p_init, p_pop_timedwait, p_remove, p_free, p_print_all. The u_get_type,
 * u_get_thread and u_create_from_task members are not used. `access` is what
 * ABT_pool_get_access reports. */
struct ABT_pool_def {
  ABT_pool_access access;
  ABT_unit_get_type_fn u_get_type;
  ABT_unit_get_thread_fn u_get_thread;
  ABT_unit_get_task_fn u_get_task;
  ABT_unit_is_in_pool_fn u_is_in_pool;
  ABT_unit_create_from_thread_fn u_create_from_thread;
  ABT_unit_create_from_task_fn u_create_from_task;
  ABT_unit_free_fn u_free;
  ABT_pool_init_fn p_init;
  ABT_pool_get_size_fn p_get_size;
  ABT_pool_push_fn p_push;
  ABT_pool_pop_fn p_pop;
  ABT_pool_pop_timedwait_fn p_pop_timedwait;
  ABT_pool_remove_fn p_remove;
  ABT_pool_free_fn p_free;
  ABT_pool_print_all_fn p_print_all;
};
typedef struct ABT_pool_def ABT_pool_def;

/* ======================================================================================== */
/* Tool callbacks                                                                            */
/* ======================================================================================== */

/* Called for each registered event of a work unit; `xstream` is where it happened (NULL on an
 * external thread); `context` is valid only during the call, for ABT_tool_query_thread. */
typedef void (*ABT_tool_thread_callback_fn)(ABT_thread, ABT_xstream, uint64_t event,
                                            ABT_tool_context context, void* user_arg);
typedef void (*ABT_tool_task_callback_fn)(ABT_task, ABT_xstream, uint64_t event,
                                          ABT_tool_context context, void* user_arg);

/* ---- BEGIN synchronisation (owned by abt/src/sync_*.cpp) ---- */

/* Statically allocated synchronisation objects. A *_memory object set to its initialiser is a
 * ready object; ABT_*_MEMORY_GET_HANDLE turns its address into a handle that lives as long as
 * the memory and must not be freed (ABT_*_free refuses it). Its contents are private. Unlike
 * Argobots' (a struct of 16 ints), these are unions with a pointer member, so that the memory
 * is aligned for the object inside; the initialisers are written the same way. */
typedef union {
  int dummy[16];
  void* weft_align; /* keeps the memory pointer-aligned for the object inside */
} ABT_mutex_memory;
/* A plain (non-recursive) mutex. */
#define ABT_MUTEX_INITIALIZER                          \
  {                                                    \
    { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 } \
  }
/* A recursive mutex. */
#define ABT_RECURSIVE_MUTEX_INITIALIZER                \
  {                                                    \
    { 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 } \
  }
#define ABT_MUTEX_MEMORY_GET_HANDLE(p_mutex_memory) ((ABT_mutex)(p_mutex_memory))

typedef union {
  int dummy[16];
  void* weft_align; /* keeps the memory pointer-aligned for the object inside */
} ABT_cond_memory;
#define ABT_COND_INITIALIZER                           \
  {                                                    \
    { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 } \
  }
#define ABT_COND_MEMORY_GET_HANDLE(p_cond_memory) ((ABT_cond)(p_cond_memory))

/* A statically initialised eventual holds no value buffer: set it with nbytes 0. */
typedef union {
  int dummy[16];
  void* weft_align; /* keeps the memory pointer-aligned for the object inside */
} ABT_eventual_memory;
#define ABT_EVENTUAL_INITIALIZER                       \
  {                                                    \
    { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 } \
  }
#define ABT_EVENTUAL_MEMORY_GET_HANDLE(p_eventual_memory) ((ABT_eventual)(p_eventual_memory))

/* Execution-stream barrier: blocks the calling stream (kernel thread) until num_waiters
 * streams wait. */
int ABT_xstream_barrier_create(uint32_t num_waiters,
                               ABT_xstream_barrier* newbarrier) ABT_API_PUBLIC;
int ABT_xstream_barrier_free(ABT_xstream_barrier* barrier) ABT_API_PUBLIC;
int ABT_xstream_barrier_wait(ABT_xstream_barrier barrier) ABT_API_PUBLIC;

/* Mutex. lock blocks a ULT (other units of its stream run meanwhile) or an external thread
 * (futex), and spins in a tasklet; spinlock busy-waits in every context. lock_high/low are
 * priority hints and unlock_se/de hand-over hints, which weft, like Argobots 1.2, treats as
 * lock and unlock. */
int ABT_mutex_create(ABT_mutex* newmutex) ABT_API_PUBLIC;
int ABT_mutex_create_with_attr(ABT_mutex_attr attr, ABT_mutex* newmutex) ABT_API_PUBLIC;
int ABT_mutex_free(ABT_mutex* mutex) ABT_API_PUBLIC;
int ABT_mutex_lock(ABT_mutex mutex) ABT_API_PUBLIC;
int ABT_mutex_lock_high(ABT_mutex mutex) ABT_API_PUBLIC;
int ABT_mutex_lock_low(ABT_mutex mutex) ABT_API_PUBLIC;
int ABT_mutex_trylock(ABT_mutex mutex) ABT_API_PUBLIC;
int ABT_mutex_spinlock(ABT_mutex mutex) ABT_API_PUBLIC;
int ABT_mutex_unlock(ABT_mutex mutex) ABT_API_PUBLIC;
int ABT_mutex_unlock_se(ABT_mutex mutex) ABT_API_PUBLIC;
int ABT_mutex_unlock_de(ABT_mutex mutex) ABT_API_PUBLIC;
int ABT_mutex_equal(ABT_mutex mutex1, ABT_mutex mutex2, ABT_bool* result) ABT_API_PUBLIC;
int ABT_mutex_get_attr(ABT_mutex mutex, ABT_mutex_attr* attr) ABT_API_PUBLIC;

/* Mutex attributes. */
int ABT_mutex_attr_create(ABT_mutex_attr* newattr) ABT_API_PUBLIC;
int ABT_mutex_attr_free(ABT_mutex_attr* attr) ABT_API_PUBLIC;
int ABT_mutex_attr_set_recursive(ABT_mutex_attr attr, ABT_bool recursive) ABT_API_PUBLIC;
int ABT_mutex_attr_get_recursive(ABT_mutex_attr attr, ABT_bool* recursive) ABT_API_PUBLIC;

/* Condition variable, used with an ABT_mutex. timedwait's deadline is CLOCK_REALTIME. */
int ABT_cond_create(ABT_cond* newcond) ABT_API_PUBLIC;
int ABT_cond_free(ABT_cond* cond) ABT_API_PUBLIC;
int ABT_cond_wait(ABT_cond cond, ABT_mutex mutex) ABT_API_PUBLIC;
int ABT_cond_timedwait(ABT_cond cond, ABT_mutex mutex,
                       const struct timespec* abstime) ABT_API_PUBLIC;
int ABT_cond_signal(ABT_cond cond) ABT_API_PUBLIC;
int ABT_cond_broadcast(ABT_cond cond) ABT_API_PUBLIC;

/* Readers-writer lock. */
int ABT_rwlock_create(ABT_rwlock* newrwlock) ABT_API_PUBLIC;
int ABT_rwlock_free(ABT_rwlock* rwlock) ABT_API_PUBLIC;
int ABT_rwlock_rdlock(ABT_rwlock rwlock) ABT_API_PUBLIC;
int ABT_rwlock_wrlock(ABT_rwlock rwlock) ABT_API_PUBLIC;
int ABT_rwlock_unlock(ABT_rwlock rwlock) ABT_API_PUBLIC;

/* Eventual: a one-shot value of nbytes bytes that waiters block on until it is set. */
int ABT_eventual_create(int nbytes, ABT_eventual* neweventual) ABT_API_PUBLIC;
int ABT_eventual_free(ABT_eventual* eventual) ABT_API_PUBLIC;
int ABT_eventual_wait(ABT_eventual eventual, void** value) ABT_API_PUBLIC;
int ABT_eventual_test(ABT_eventual eventual, void** value, ABT_bool* is_ready) ABT_API_PUBLIC;
int ABT_eventual_set(ABT_eventual eventual, void* value, int nbytes) ABT_API_PUBLIC;
int ABT_eventual_reset(ABT_eventual eventual) ABT_API_PUBLIC;

/* Future: ready once num_compartments values were set; cb_func gets them all. */
int ABT_future_create(uint32_t num_compartments, void (*cb_func)(void** arg),
                      ABT_future* newfuture) ABT_API_PUBLIC;
int ABT_future_free(ABT_future* future) ABT_API_PUBLIC;
int ABT_future_wait(ABT_future future) ABT_API_PUBLIC;
int ABT_future_test(ABT_future future, ABT_bool* is_ready) ABT_API_PUBLIC;
int ABT_future_set(ABT_future future, void* value) ABT_API_PUBLIC;
int ABT_future_reset(ABT_future future) ABT_API_PUBLIC;

/* Barrier between work units (and external threads). */
int ABT_barrier_create(uint32_t num_waiters, ABT_barrier* newbarrier) ABT_API_PUBLIC;
int ABT_barrier_reinit(ABT_barrier barrier, uint32_t num_waiters) ABT_API_PUBLIC;
int ABT_barrier_free(ABT_barrier* barrier) ABT_API_PUBLIC;
int ABT_barrier_wait(ABT_barrier barrier) ABT_API_PUBLIC;
int ABT_barrier_get_num_waiters(ABT_barrier barrier, uint32_t* num_waiters) ABT_API_PUBLIC;

/* Wall-clock time in seconds (monotonic) and timers built on it. */
double ABT_get_wtime(void) ABT_API_PUBLIC;
int ABT_timer_create(ABT_timer* newtimer) ABT_API_PUBLIC;
int ABT_timer_dup(ABT_timer timer, ABT_timer* newtimer) ABT_API_PUBLIC;
int ABT_timer_free(ABT_timer* timer) ABT_API_PUBLIC;
int ABT_timer_start(ABT_timer timer) ABT_API_PUBLIC;
int ABT_timer_stop(ABT_timer timer) ABT_API_PUBLIC;
int ABT_timer_read(ABT_timer timer, double* secs) ABT_API_PUBLIC;
int ABT_timer_stop_and_read(ABT_timer timer, double* secs) ABT_API_PUBLIC;
int ABT_timer_stop_and_add(ABT_timer timer, double* secs) ABT_API_PUBLIC;
int ABT_timer_get_overhead(double* overhead) ABT_API_PUBLIC;

/* ---- END synchronisation ---- */

/* ======================================================================================== */
/* Initialisation                                                                            */
/* ======================================================================================== */

/* Initialises the runtime (nested calls count; argc/argv are unused). The calling thread
 * becomes the primary execution stream and keeps running as the primary ULT. */
int ABT_init(int argc, char** argv) ABT_API_PUBLIC;
/* Undoes one ABT_init; the last one shuts the runtime down. Only from the primary ULT. */
int ABT_finalize(void) ABT_API_PUBLIC;
/* ABT_SUCCESS when initialised, ABT_ERR_UNINITIALIZED otherwise. */
int ABT_initialized(void) ABT_API_PUBLIC;

/* ======================================================================================== */
/* Execution streams                                                                         */
/* ======================================================================================== */

int ABT_xstream_create(ABT_sched sched, ABT_xstream* newxstream) ABT_API_PUBLIC;
int ABT_xstream_create_basic(ABT_sched_predef predef, int num_pools, ABT_pool* pools,
                             ABT_sched_config config, ABT_xstream* newxstream) ABT_API_PUBLIC;
int ABT_xstream_create_with_rank(ABT_sched sched, int rank, ABT_xstream* newxstream) ABT_API_PUBLIC;
int ABT_xstream_free(ABT_xstream* xstream) ABT_API_PUBLIC;
int ABT_xstream_join(ABT_xstream xstream) ABT_API_PUBLIC;
int ABT_xstream_revive(ABT_xstream xstream) ABT_API_PUBLIC;
int ABT_xstream_exit(void) ABT_API_PUBLIC;
int ABT_xstream_cancel(ABT_xstream xstream) ABT_API_PUBLIC;
int ABT_xstream_self(ABT_xstream* xstream) ABT_API_PUBLIC;
int ABT_xstream_self_rank(int* rank) ABT_API_PUBLIC;
int ABT_xstream_set_rank(ABT_xstream xstream, int rank) ABT_API_PUBLIC;
int ABT_xstream_get_rank(ABT_xstream xstream, int* rank) ABT_API_PUBLIC;
int ABT_xstream_set_main_sched(ABT_xstream xstream, ABT_sched sched) ABT_API_PUBLIC;
int ABT_xstream_set_main_sched_basic(ABT_xstream xstream, ABT_sched_predef predef, int num_pools,
                                     ABT_pool* pools) ABT_API_PUBLIC;
int ABT_xstream_get_main_sched(ABT_xstream xstream, ABT_sched* sched) ABT_API_PUBLIC;
int ABT_xstream_get_main_pools(ABT_xstream xstream, int max_pools, ABT_pool* pools) ABT_API_PUBLIC;
int ABT_xstream_get_state(ABT_xstream xstream, ABT_xstream_state* state) ABT_API_PUBLIC;
int ABT_xstream_equal(ABT_xstream xstream1, ABT_xstream xstream2, ABT_bool* result) ABT_API_PUBLIC;
int ABT_xstream_get_num(int* num_xstreams) ABT_API_PUBLIC;
int ABT_xstream_is_primary(ABT_xstream xstream, ABT_bool* is_primary) ABT_API_PUBLIC;
/* For user schedulers: runs `unit` (popped from `pool`) until it yields, blocks or ends. */
int ABT_xstream_run_unit(ABT_unit unit, ABT_pool pool) ABT_API_PUBLIC;
/* For user schedulers: handles the calling stream's pending requests. */
int ABT_xstream_check_events(ABT_sched sched) ABT_API_PUBLIC;
int ABT_xstream_set_cpubind(ABT_xstream xstream, int cpuid) ABT_API_PUBLIC;
int ABT_xstream_get_cpubind(ABT_xstream xstream, int* cpuid) ABT_API_PUBLIC;
int ABT_xstream_set_affinity(ABT_xstream xstream, int num_cpuids, int* cpuids) ABT_API_PUBLIC;
int ABT_xstream_get_affinity(ABT_xstream xstream, int max_cpuids, int* cpuids,
                             int* num_cpuids) ABT_API_PUBLIC;

/* ======================================================================================== */
/* Schedulers                                                                                */
/* ======================================================================================== */

int ABT_sched_create(ABT_sched_def* def, int num_pools, ABT_pool* pools, ABT_sched_config config,
                     ABT_sched* newsched) ABT_API_PUBLIC;
int ABT_sched_create_basic(ABT_sched_predef predef, int num_pools, ABT_pool* pools,
                           ABT_sched_config config, ABT_sched* newsched) ABT_API_PUBLIC;
int ABT_sched_free(ABT_sched* sched) ABT_API_PUBLIC;
int ABT_sched_set_data(ABT_sched sched, void* data) ABT_API_PUBLIC;
int ABT_sched_get_data(ABT_sched sched, void** data) ABT_API_PUBLIC;
int ABT_sched_get_num_pools(ABT_sched sched, int* num_pools) ABT_API_PUBLIC;
int ABT_sched_get_pools(ABT_sched sched, int max_pools, int idx, ABT_pool* pools) ABT_API_PUBLIC;
int ABT_sched_get_size(ABT_sched sched, size_t* size) ABT_API_PUBLIC;
int ABT_sched_get_total_size(ABT_sched sched, size_t* size) ABT_API_PUBLIC;
int ABT_sched_finish(ABT_sched sched) ABT_API_PUBLIC;
int ABT_sched_exit(ABT_sched sched) ABT_API_PUBLIC;
int ABT_sched_has_to_stop(ABT_sched sched, ABT_bool* stop) ABT_API_PUBLIC;

/* Scheduler configurations: create takes (ABT_sched_config_var, value) pairs ended by
 * ABT_sched_config_var_end; read stores num_vars values into the pointers that follow, in
 * index order. */
int ABT_sched_config_create(ABT_sched_config* config, ...) ABT_API_PUBLIC;
int ABT_sched_config_read(ABT_sched_config config, int num_vars, ...) ABT_API_PUBLIC;
int ABT_sched_config_free(ABT_sched_config* config) ABT_API_PUBLIC;
int ABT_sched_config_set(ABT_sched_config config, int idx, ABT_sched_config_type type,
                         const void* val) ABT_API_PUBLIC;
int ABT_sched_config_get(ABT_sched_config config, int idx, ABT_sched_config_type* p_type,
                         void* val) ABT_API_PUBLIC;

/* ======================================================================================== */
/* Pools                                                                                     */
/* ======================================================================================== */

int ABT_pool_create(ABT_pool_user_def def, ABT_pool_config config,
                    ABT_pool* newpool) ABT_API_PUBLIC;
int ABT_pool_create_basic(ABT_pool_kind kind, ABT_pool_access access, ABT_bool automatic,
                          ABT_pool* newpool) ABT_API_PUBLIC;
int ABT_pool_free(ABT_pool* pool) ABT_API_PUBLIC;
int ABT_pool_get_access(ABT_pool pool, ABT_pool_access* access) ABT_API_PUBLIC;
int ABT_pool_is_empty(ABT_pool pool, ABT_bool* is_empty) ABT_API_PUBLIC;
int ABT_pool_get_size(ABT_pool pool, size_t* size) ABT_API_PUBLIC;
int ABT_pool_get_total_size(ABT_pool pool, size_t* size) ABT_API_PUBLIC;
int ABT_pool_pop_thread(ABT_pool pool, ABT_thread* thread) ABT_API_PUBLIC;
int ABT_pool_pop_thread_ex(ABT_pool pool, ABT_thread* thread,
                           ABT_pool_context pool_ctx) ABT_API_PUBLIC;
int ABT_pool_pop_threads(ABT_pool pool, ABT_thread* threads, size_t len,
                         size_t* num) ABT_API_PUBLIC;
int ABT_pool_pop_threads_ex(ABT_pool pool, ABT_thread* threads, size_t len, size_t* num,
                            ABT_pool_context pool_ctx) ABT_API_PUBLIC;
int ABT_pool_push_thread(ABT_pool pool, ABT_thread thread) ABT_API_PUBLIC;
int ABT_pool_push_thread_ex(ABT_pool pool, ABT_thread thread,
                            ABT_pool_context pool_ctx) ABT_API_PUBLIC;
int ABT_pool_push_threads(ABT_pool pool, const ABT_thread* threads, size_t num) ABT_API_PUBLIC;
int ABT_pool_push_threads_ex(ABT_pool pool, const ABT_thread* threads, size_t num,
                             ABT_pool_context pool_ctx) ABT_API_PUBLIC;
int ABT_pool_pop_wait_thread(ABT_pool pool, ABT_thread* thread, double time_secs) ABT_API_PUBLIC;
int ABT_pool_pop_wait_thread_ex(ABT_pool pool, ABT_thread* thread, double time_secs,
                                ABT_pool_context pool_ctx) ABT_API_PUBLIC;
int ABT_pool_print_all_threads(ABT_pool pool, void* arg,
                               void (*print_fn)(void* arg, ABT_thread)) ABT_API_PUBLIC;
int ABT_pool_set_data(ABT_pool pool, void* data) ABT_API_PUBLIC;
int ABT_pool_get_data(ABT_pool pool, void** data) ABT_API_PUBLIC;
/* Stacks `sched` on `pool`: the scheduler runs as a work unit of that pool. */
int ABT_pool_add_sched(ABT_pool pool, ABT_sched sched) ABT_API_PUBLIC;
int ABT_pool_get_id(ABT_pool pool, int* id) ABT_API_PUBLIC;

/* The unit-based pool operations of the older interface. */
int ABT_pool_pop(ABT_pool pool, ABT_unit* unit) ABT_API_PUBLIC;
int ABT_pool_pop_wait(ABT_pool pool, ABT_unit* unit, double time_secs) ABT_API_PUBLIC;
int ABT_pool_pop_timedwait(ABT_pool pool, ABT_unit* unit,
                           double abstime_secs) ABT_DEPRECATED ABT_API_PUBLIC;
int ABT_pool_remove(ABT_pool pool, ABT_unit unit) ABT_API_PUBLIC;
int ABT_pool_push(ABT_pool pool, ABT_unit unit) ABT_API_PUBLIC;
int ABT_pool_print_all(ABT_pool pool, void* arg,
                       void (*print_fn)(void* arg, ABT_unit)) ABT_API_PUBLIC;

/* Pool configurations. */
int ABT_pool_config_create(ABT_pool_config* config) ABT_API_PUBLIC;
int ABT_pool_config_free(ABT_pool_config* config) ABT_API_PUBLIC;
int ABT_pool_config_set(ABT_pool_config config, int key, ABT_pool_config_type type,
                        const void* val) ABT_API_PUBLIC;
int ABT_pool_config_get(ABT_pool_config config, int key, ABT_pool_config_type* p_type,
                        void* val) ABT_API_PUBLIC;

/* Pool definitions (the 1.2 interface). */
int ABT_pool_user_def_create(ABT_pool_user_create_unit_fn p_create_unit,
                             ABT_pool_user_free_unit_fn p_free_unit,
                             ABT_pool_user_is_empty_fn p_is_empty, ABT_pool_user_pop_fn p_pop,
                             ABT_pool_user_push_fn p_push,
                             ABT_pool_user_def* newdef) ABT_API_PUBLIC;
int ABT_pool_user_def_free(ABT_pool_user_def* def) ABT_API_PUBLIC;
int ABT_pool_user_def_set_init(ABT_pool_user_def def, ABT_pool_user_init_fn p_init) ABT_API_PUBLIC;
int ABT_pool_user_def_set_free(ABT_pool_user_def def, ABT_pool_user_free_fn p_free) ABT_API_PUBLIC;
int ABT_pool_user_def_set_get_size(ABT_pool_user_def def,
                                   ABT_pool_user_get_size_fn p_get_size) ABT_API_PUBLIC;
int ABT_pool_user_def_set_pop_wait(ABT_pool_user_def def,
                                   ABT_pool_user_pop_wait_fn p_pop_wait) ABT_API_PUBLIC;
int ABT_pool_user_def_set_pop_many(ABT_pool_user_def def,
                                   ABT_pool_user_pop_many_fn p_pop_many) ABT_API_PUBLIC;
int ABT_pool_user_def_set_push_many(ABT_pool_user_def def,
                                    ABT_pool_user_push_many_fn p_push_many) ABT_API_PUBLIC;
int ABT_pool_user_def_set_print_all(ABT_pool_user_def def,
                                    ABT_pool_user_print_all_fn p_print_all) ABT_API_PUBLIC;

/* Scheduling units. */
int ABT_unit_get_thread(ABT_unit unit, ABT_thread* thread) ABT_API_PUBLIC;
int ABT_unit_set_associated_pool(ABT_unit unit, ABT_pool pool) ABT_API_PUBLIC;

/* ======================================================================================== */
/* Work units (ULTs; tasklets share the handle type)                                         */
/* ======================================================================================== */

/* newthread may be NULL: the unit is then unnamed and frees itself when it ends. */
int ABT_thread_create(ABT_pool pool, void (*thread_func)(void*), void* arg, ABT_thread_attr attr,
                      ABT_thread* newthread) ABT_API_PUBLIC;
int ABT_thread_create_to(ABT_pool pool, void (*thread_func)(void*), void* arg, ABT_thread_attr attr,
                         ABT_thread* newthread) ABT_API_PUBLIC;
int ABT_thread_create_on_xstream(ABT_xstream xstream, void (*thread_func)(void*), void* arg,
                                 ABT_thread_attr attr, ABT_thread* newthread) ABT_API_PUBLIC;
int ABT_thread_create_many(int num_threads, ABT_pool* pool_list, void (**thread_func_list)(void*),
                           void** arg_list, ABT_thread_attr attr,
                           ABT_thread* newthread_list) ABT_API_PUBLIC;
int ABT_thread_revive(ABT_pool pool, void (*thread_func)(void*), void* arg,
                      ABT_thread* thread) ABT_API_PUBLIC;
int ABT_thread_revive_to(ABT_pool pool, void (*thread_func)(void*), void* arg,
                         ABT_thread* thread) ABT_API_PUBLIC;
int ABT_thread_free(ABT_thread* thread) ABT_API_PUBLIC;
int ABT_thread_free_many(int num_threads, ABT_thread* thread_list) ABT_API_PUBLIC;
int ABT_thread_join(ABT_thread thread) ABT_API_PUBLIC;
int ABT_thread_join_many(int num_threads, ABT_thread* thread_list) ABT_API_PUBLIC;
int ABT_thread_exit(void) ABT_API_PUBLIC;
int ABT_thread_cancel(ABT_thread thread) ABT_API_PUBLIC;
int ABT_thread_self(ABT_thread* thread) ABT_API_PUBLIC;
int ABT_thread_self_id(ABT_unit_id* id) ABT_API_PUBLIC;
int ABT_thread_get_last_xstream(ABT_thread thread, ABT_xstream* xstream) ABT_API_PUBLIC;
int ABT_thread_get_state(ABT_thread thread, ABT_thread_state* state) ABT_API_PUBLIC;
int ABT_thread_get_last_pool(ABT_thread thread, ABT_pool* pool) ABT_API_PUBLIC;
int ABT_thread_get_last_pool_id(ABT_thread thread, int* id) ABT_API_PUBLIC;
int ABT_thread_get_unit(ABT_thread thread, ABT_unit* unit) ABT_API_PUBLIC;
int ABT_thread_set_associated_pool(ABT_thread thread, ABT_pool pool) ABT_API_PUBLIC;
int ABT_thread_yield_to(ABT_thread thread) ABT_API_PUBLIC;
int ABT_thread_yield(void) ABT_API_PUBLIC;
int ABT_thread_resume(ABT_thread thread) ABT_API_PUBLIC;
int ABT_thread_migrate_to_xstream(ABT_thread thread, ABT_xstream xstream) ABT_API_PUBLIC;
int ABT_thread_migrate_to_sched(ABT_thread thread, ABT_sched sched) ABT_API_PUBLIC;
int ABT_thread_migrate_to_pool(ABT_thread thread, ABT_pool pool) ABT_API_PUBLIC;
int ABT_thread_migrate(ABT_thread thread) ABT_API_PUBLIC;
int ABT_thread_set_callback(ABT_thread thread, void (*cb_func)(ABT_thread thread, void* cb_arg),
                            void* cb_arg) ABT_API_PUBLIC;
int ABT_thread_set_migratable(ABT_thread thread, ABT_bool migratable) ABT_API_PUBLIC;
int ABT_thread_is_migratable(ABT_thread thread, ABT_bool* is_migratable) ABT_API_PUBLIC;
int ABT_thread_is_primary(ABT_thread thread, ABT_bool* is_primary) ABT_API_PUBLIC;
int ABT_thread_is_unnamed(ABT_thread thread, ABT_bool* is_unnamed) ABT_API_PUBLIC;
int ABT_thread_equal(ABT_thread thread1, ABT_thread thread2, ABT_bool* result) ABT_API_PUBLIC;
int ABT_thread_get_stacksize(ABT_thread thread, size_t* stacksize) ABT_API_PUBLIC;
int ABT_thread_get_id(ABT_thread thread, ABT_unit_id* thread_id) ABT_API_PUBLIC;
int ABT_thread_set_arg(ABT_thread thread, void* arg) ABT_API_PUBLIC;
int ABT_thread_get_arg(ABT_thread thread, void** arg) ABT_API_PUBLIC;
int ABT_thread_get_thread_func(ABT_thread thread, void (**thread_func)(void*)) ABT_API_PUBLIC;
int ABT_thread_set_specific(ABT_thread thread, ABT_key key, void* value) ABT_API_PUBLIC;
int ABT_thread_get_specific(ABT_thread thread, ABT_key key, void** value) ABT_API_PUBLIC;
int ABT_thread_get_attr(ABT_thread thread, ABT_thread_attr* attr) ABT_API_PUBLIC;

/* ULT attributes. */
int ABT_thread_attr_create(ABT_thread_attr* newattr) ABT_API_PUBLIC;
int ABT_thread_attr_free(ABT_thread_attr* attr) ABT_API_PUBLIC;
int ABT_thread_attr_set_stack(ABT_thread_attr attr, void* stackaddr,
                              size_t stacksize) ABT_API_PUBLIC;
int ABT_thread_attr_get_stack(ABT_thread_attr attr, void** stackaddr,
                              size_t* stacksize) ABT_API_PUBLIC;
int ABT_thread_attr_set_stacksize(ABT_thread_attr attr, size_t stacksize) ABT_API_PUBLIC;
int ABT_thread_attr_get_stacksize(ABT_thread_attr attr, size_t* stacksize) ABT_API_PUBLIC;
int ABT_thread_attr_set_callback(ABT_thread_attr attr,
                                 void (*cb_func)(ABT_thread thread, void* cb_arg),
                                 void* cb_arg) ABT_API_PUBLIC;
int ABT_thread_attr_set_migratable(ABT_thread_attr attr, ABT_bool is_migratable) ABT_API_PUBLIC;

/* ======================================================================================== */
/* Tasklets                                                                                  */
/* ======================================================================================== */

int ABT_task_create(ABT_pool pool, void (*task_func)(void*), void* arg,
                    ABT_task* newtask) ABT_API_PUBLIC;
int ABT_task_create_on_xstream(ABT_xstream xstream, void (*task_func)(void*), void* arg,
                               ABT_task* newtask) ABT_API_PUBLIC;
int ABT_task_revive(ABT_pool pool, void (*task_func)(void*), void* arg,
                    ABT_task* task) ABT_API_PUBLIC;
int ABT_task_free(ABT_task* task) ABT_API_PUBLIC;
int ABT_task_join(ABT_task task) ABT_API_PUBLIC;
int ABT_task_cancel(ABT_task task) ABT_API_PUBLIC;
int ABT_task_self(ABT_task* task) ABT_API_PUBLIC;
int ABT_task_self_id(ABT_unit_id* id) ABT_API_PUBLIC;
int ABT_task_get_xstream(ABT_task task, ABT_xstream* xstream) ABT_API_PUBLIC;
int ABT_task_get_state(ABT_task task, ABT_task_state* state) ABT_API_PUBLIC;
int ABT_task_get_last_pool(ABT_task task, ABT_pool* pool) ABT_API_PUBLIC;
int ABT_task_get_last_pool_id(ABT_task task, int* id) ABT_API_PUBLIC;
int ABT_task_set_migratable(ABT_task task, ABT_bool flag) ABT_API_PUBLIC;
int ABT_task_is_migratable(ABT_task task, ABT_bool* flag) ABT_API_PUBLIC;
int ABT_task_equal(ABT_task task1, ABT_task task2, ABT_bool* result) ABT_API_PUBLIC;
int ABT_task_get_id(ABT_task task, ABT_unit_id* task_id) ABT_API_PUBLIC;
int ABT_task_get_arg(ABT_task task, void** arg) ABT_API_PUBLIC;
#define ABT_task_is_unnamed ABT_thread_is_unnamed
#define ABT_task_set_specific ABT_thread_set_specific
#define ABT_task_get_specific ABT_thread_get_specific

/* ======================================================================================== */
/* The calling work unit                                                                     */
/* ======================================================================================== */

int ABT_self_get_xstream(ABT_xstream* xstream) ABT_API_PUBLIC;
int ABT_self_get_xstream_rank(int* rank) ABT_API_PUBLIC;
int ABT_self_get_thread(ABT_thread* thread) ABT_API_PUBLIC;
int ABT_self_get_thread_id(ABT_unit_id* id) ABT_API_PUBLIC;
int ABT_self_set_specific(ABT_key key, void* value) ABT_API_PUBLIC;
int ABT_self_get_specific(ABT_key key, void** value) ABT_API_PUBLIC;
#define ABT_self_get_task ABT_self_get_thread
#define ABT_self_get_task_id ABT_self_get_thread_id
int ABT_self_get_type(ABT_unit_type* type) ABT_API_PUBLIC;
int ABT_self_is_primary(ABT_bool* is_primary) ABT_API_PUBLIC;
int ABT_self_on_primary_xstream(ABT_bool* on_primary) ABT_API_PUBLIC;
int ABT_self_is_unnamed(ABT_bool* is_unnamed) ABT_API_PUBLIC;
int ABT_self_get_last_pool(ABT_pool* pool) ABT_API_PUBLIC;
int ABT_self_get_last_pool_id(int* pool_id) ABT_API_PUBLIC;
int ABT_self_set_associated_pool(ABT_pool pool) ABT_API_PUBLIC;
int ABT_self_get_unit(ABT_unit* unit) ABT_API_PUBLIC;
int ABT_self_yield(void) ABT_API_PUBLIC;
int ABT_self_yield_to(ABT_thread thread) ABT_API_PUBLIC;
int ABT_self_resume_yield_to(ABT_thread thread) ABT_API_PUBLIC;
int ABT_self_suspend(void) ABT_API_PUBLIC;
int ABT_self_suspend_to(ABT_thread thread) ABT_API_PUBLIC;
int ABT_self_resume_suspend_to(ABT_thread thread) ABT_API_PUBLIC;
int ABT_self_exit(void) ABT_API_PUBLIC;
int ABT_self_exit_to(ABT_thread thread) ABT_API_PUBLIC;
int ABT_self_resume_exit_to(ABT_thread thread) ABT_API_PUBLIC;
int ABT_self_schedule(ABT_thread thread, ABT_pool pool) ABT_API_PUBLIC;
int ABT_self_set_arg(void* arg) ABT_API_PUBLIC;
int ABT_self_get_arg(void** arg) ABT_API_PUBLIC;
int ABT_self_get_thread_func(void (**thread_func)(void*)) ABT_API_PUBLIC;

/* ======================================================================================== */
/* Work-unit-specific data                                                                   */
/* ======================================================================================== */

int ABT_key_create(void (*destructor)(void* value), ABT_key* newkey) ABT_API_PUBLIC;
int ABT_key_free(ABT_key* key) ABT_API_PUBLIC;
int ABT_key_set(ABT_key key, void* value) ABT_API_PUBLIC;
int ABT_key_get(ABT_key key, void** value) ABT_API_PUBLIC;

/* ======================================================================================== */
/* Errors, information, tools                                                                */
/* ======================================================================================== */

/* Copies the name of `err` (e.g. "ABT_ERR_INV_THREAD") into str when it is not NULL and stores
 * its length (without the terminating NUL) into len when it is not NULL. */
int ABT_error_get_str(int err, char* str, size_t* len) ABT_API_PUBLIC;

int ABT_info_query_config(ABT_info_query_kind query_kind, void* val) ABT_API_PUBLIC;
int ABT_info_print_config(FILE* fp) ABT_API_PUBLIC;
int ABT_info_print_all_xstreams(FILE* fp) ABT_API_PUBLIC;
int ABT_info_print_xstream(FILE* fp, ABT_xstream xstream) ABT_API_PUBLIC;
int ABT_info_print_sched(FILE* fp, ABT_sched sched) ABT_API_PUBLIC;
int ABT_info_print_pool(FILE* fp, ABT_pool pool) ABT_API_PUBLIC;
int ABT_info_print_thread(FILE* fp, ABT_thread thread) ABT_API_PUBLIC;
int ABT_info_print_thread_attr(FILE* fp, ABT_thread_attr attr) ABT_API_PUBLIC;
int ABT_info_print_task(FILE* fp, ABT_task task) ABT_API_PUBLIC;
int ABT_info_print_thread_stack(FILE* fp, ABT_thread thread) ABT_API_PUBLIC;
int ABT_info_print_thread_stacks_in_pool(FILE* fp, ABT_pool pool) ABT_API_PUBLIC;
int ABT_info_trigger_print_all_thread_stacks(FILE* fp, double timeout,
                                             void (*cb_func)(ABT_bool, void*),
                                             void* arg) ABT_API_PUBLIC;

int ABT_tool_register_thread_callback(ABT_tool_thread_callback_fn cb_func, uint64_t event_mask,
                                      void* user_arg) ABT_API_PUBLIC;
int ABT_tool_query_thread(ABT_tool_context context, uint64_t event, ABT_tool_query_kind query_kind,
                          void* val) ABT_API_PUBLIC;

#if defined(__cplusplus)
}
#endif

#endif /* WEFT_ABT_H_INCLUDED */
