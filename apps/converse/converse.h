// SPDX-License-Identifier: Apache-2.0
/* converse.h: a small message-driven runtime in the style of Charm++'s Converse, written on
 * weft's Argobots-compatible API (abt.h) as a worked porting example (see docs/porting.md).
 *
 * The model, as in Converse:
 *  - A run has a fixed number of processing elements (PEs). Each PE is one execution stream.
 *  - Work arrives at a PE as messages. A message is a buffer from CmiAlloc() whose header names a
 *    handler (an index from CmiRegisterHandler()); sending it to a PE runs that handler on that
 *    PE, once, to completion, with the message as its argument. The handler owns the message
 *    and frees it with CmiFree() (or sends it on with CmiSyncSendAndFree()).
 *  - A PE may also run user-level threads (CthThread). A thread is created suspended, runs once
 *    awakened, and may suspend itself until another thread or a handler awakens it. Threads stay
 *    on the PE that created them.
 *  - A run ends at quiescence: when no message is in flight or being handled and every thread
 *    has ended. ConverseRun() then returns.
 *
 * The mapping onto abt.h: each PE is an ABT_xstream (the primary stream is PE 0) whose main
 * scheduler is a custom ABT_sched_def over two pools, messages first; a message is an ABT tasklet
 * pushed into the destination PE's message pool; a CthThread is a ULT in its PE's thread pool,
 * suspended and awakened through an ABT_mutex and ABT_cond.
 *
 * Calling contexts: CmiRegisterHandler() before ConverseRun(); every other function from a
 * handler or a thread of the run (CthSuspend() and CthYield() from threads only).
 */
#ifndef WEFT_APPS_CONVERSE_H
#define WEFT_APPS_CONVERSE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A message handler: runs on the destination PE and owns `msg` (frees it or sends it on). */
typedef void (*CmiHandler)(void* msg);
/* The body of a user-level thread. */
typedef void (*CthVoidFn)(void* arg);
/* A user-level thread of one PE. */
typedef struct CthThreadStruct* CthThread;

/* The largest number of PEs and handlers a run supports. */
#define CMI_MAX_PES 64
#define CMI_MAX_HANDLERS 64

/* Registers a handler and returns its index (the same on every PE), or -1 when the table is
 * full. Call before ConverseRun(). */
int CmiRegisterHandler(CmiHandler handler);

/* Starts `num_pes` PEs, runs `start(arg)` as a thread on PE 0, waits for quiescence, and shuts the
 * PEs down. Returns 0, or the abt.h error code that stopped it. One run at a time, from main(). */
int ConverseRun(int num_pes, CthVoidFn start, void* arg);

/* The calling handler's or thread's PE, and the number of PEs of the run. */
int CmiMyPe(void);
int CmiNumPes(void);

/* A message buffer of `size` user bytes, with room for the header in front. */
void* CmiAlloc(size_t size);
/* Frees a buffer from CmiAlloc(). */
void CmiFree(void* msg);
/* Sets and reads the handler a message will run on arrival. */
void CmiSetHandler(void* msg, int handler);
int CmiGetHandler(const void* msg);

/* Sends a copy of the first `size` bytes of `msg` to `pe`; the caller keeps `msg`. */
void CmiSyncSend(int pe, size_t size, const void* msg);
/* Sends `msg` itself to `pe`; the caller gives it up. */
void CmiSyncSendAndFree(int pe, size_t size, void* msg);
/* Sends a copy of `msg` to every PE, the caller's included; the caller keeps `msg`. */
void CmiSyncBroadcastAll(size_t size, const void* msg);

/* Creates a suspended thread on the calling PE (stacksize 0: the default). */
CthThread CthCreate(CthVoidFn fn, void* arg, size_t stacksize);
/* Makes `thread` runnable: starts it, or ends one CthSuspend() of it. An awakening that comes
 * before the thread suspends is kept, so the next CthSuspend() returns at once. Any PE. */
void CthAwaken(CthThread thread);
/* Suspends the calling thread until it is awakened. */
void CthSuspend(void);
/* Lets the other work of the calling PE run, then continues. */
void CthYield(void);
/* The calling thread (NULL from a handler). */
CthThread CthSelf(void);

#ifdef __cplusplus
}
#endif

#endif
