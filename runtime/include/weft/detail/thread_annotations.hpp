// SPDX-License-Identifier: Apache-2.0
// Clang thread-safety annotations (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html) for
// weft's locks and the data they guard. With -Wthread-safety, clang checks at compile time that
// every access to a guarded member happens with its lock held; other compilers see nothing.
//
// These are macros because attributes cannot be produced by a template or an inline function.
// They are the only macros weft defines for its own code, prefixed WEFT_ so that they cannot
// collide with another library's spellings (Abseil's and LLVM's use the bare names).
#pragma once

#if defined(__clang__)
#define WEFT_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define WEFT_THREAD_ANNOTATION(x)
#endif

/// On a class: its objects are locks (the analysis tracks whether each one is held).
#define WEFT_CAPABILITY(name) WEFT_THREAD_ANNOTATION(capability(name))
/// On a class: an RAII guard that holds the lock it was constructed with until destroyed.
#define WEFT_SCOPED_CAPABILITY WEFT_THREAD_ANNOTATION(scoped_lockable)
/// On a data member: read and written only with `lock` held.
#define WEFT_GUARDED_BY(lock) WEFT_THREAD_ANNOTATION(guarded_by(lock))
/// On a pointer member: what it points to is read and written only with `lock` held.
#define WEFT_PT_GUARDED_BY(lock) WEFT_THREAD_ANNOTATION(pt_guarded_by(lock))
/// On a function: callers must hold the named locks.
#define WEFT_REQUIRES(...) WEFT_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
/// On a function: it acquires the named locks (`this` when none is named) and returns holding them.
#define WEFT_ACQUIRE(...) WEFT_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
/// On a function: it releases the named locks (`this` when none is named).
#define WEFT_RELEASE(...) WEFT_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
/// On a function: it acquires the lock when it returns `result` (try_lock).
#define WEFT_TRY_ACQUIRE(...) WEFT_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
/// On a function: the analysis skips its body (a lock handed across a context switch, which the
/// analysis cannot follow); say why beside each use.
#define WEFT_NO_THREAD_SAFETY_ANALYSIS WEFT_THREAD_ANNOTATION(no_thread_safety_analysis)
