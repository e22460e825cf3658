/* Threads that block in one known call each, under two functions of their own, for the
 * capture tests: built as C and as C++, with and without frame pointers. */
#ifndef LAGSCOPE_TEST_VICTIMS_H
#define LAGSCOPE_TEST_VICTIMS_H

#ifdef __cplusplus
extern "C" {
#endif

enum victim_kind { VICTIM_NANOSLEEP, VICTIM_READ, VICTIM_POLL, VICTIM_MUTEX, VICTIM_COND,
                   VICTIM_EPOLL, VICTIM_KINDS };

/* Prepares the pipes, locks and epoll set; the mutex is taken by the caller. */
void victims_prepare(void);
/* A thread's start routine: arg is the kind (as intptr_t). It calls the kind's outer function,
 * which calls its inner function, which blocks until victims_release. */
void *victims_thread(void *arg);
/* Ends every block: the threads return. Called by the thread that called victims_prepare. */
void victims_release(void);
/* The kind's function names, outermost last, as a symbolicator shows them (C++: qualified,
 * without the parameter list). */
const char *victims_inner_name(int kind);
const char *victims_outer_name(int kind);

#ifdef __cplusplus
}
#endif

#endif
