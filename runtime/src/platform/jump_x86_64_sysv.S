// SPDX-License-Identifier: Apache-2.0
/* weft_jump_fcontext: the ULT-to-ULT context switch on x86-64 System V (ELF); jump.hpp says why
 * weft has its own. It reads and writes the frame that Boost.Context's make_fcontext builds and its
 * jump_fcontext saves (0x00 MXCSR, 0x04 x87 control word, 0x08-0x30 r12 r13 r14 r15 rbx rbp,
 * 0x38 the resume address), so a context from make_fcontext starts through Boost's trampoline.
 * Unlike Boost's, it resumes with `ret` rather than `jmp *%r8`: the `call` that entered it is
 * matched by a `ret`, so the return-stack predictor stays in step across a switch. The floating-
 * point control words are saved and restored, as Boost does: a ULT keeps its rounding mode.
 *
 * transfer_t weft_jump_fcontext(fcontext_t to, void* data):
 *   saves the caller's context on its stack, switches to `to`, and returns to it there with
 *   {the saved context (rax), data (rdx)}; a new context gets them as its entry's arguments
 *   (rdi, rsi).
 */
#if defined(__x86_64__) && defined(__ELF__)
.text
.globl weft_jump_fcontext
.hidden weft_jump_fcontext
.type weft_jump_fcontext,@function
.align 16
weft_jump_fcontext:
    leaq  -0x38(%rsp), %rsp   /* the frame; 0x38(%rsp) is the return address of our call */
    stmxcsr  (%rsp)
    fnstcw   0x4(%rsp)
    movq  %r12, 0x8(%rsp)
    movq  %r13, 0x10(%rsp)
    movq  %r14, 0x18(%rsp)
    movq  %r15, 0x20(%rsp)
    movq  %rbx, 0x28(%rsp)
    movq  %rbp, 0x30(%rsp)
    movq  %rsp, %rax          /* the caller's context */
    movq  %rdi, %rsp          /* the target's frame */
    ldmxcsr  (%rsp)
    fldcw    0x4(%rsp)
    movq  0x8(%rsp), %r12
    movq  0x10(%rsp), %r13
    movq  0x18(%rsp), %r14
    movq  0x20(%rsp), %r15
    movq  0x28(%rsp), %rbx
    movq  0x30(%rsp), %rbp
    leaq  0x38(%rsp), %rsp    /* the target's resume address is on top */
    movq  %rsi, %rdx          /* transfer_t.data, returned */
    movq  %rax, %rdi          /* transfer_t.fctx, a new context's first argument */
    ret
.size weft_jump_fcontext,.-weft_jump_fcontext
#endif
/* No executable stack for the library. No GNU property note either: the switch does not move a
 * CET shadow stack, so a library linked from it must not claim shadow-stack support (Debian's
 * libboost_context 1.74 carries no such note either). */
.section .note.GNU-stack,"",%progbits
