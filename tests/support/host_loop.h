/* A host app's main loop for in-process tests: frames at a fixed rate, a post_main queue
 * drained on the loop's thread, and a hook that runs each frame (where tests stall). */
#ifndef LAGSCOPE_TEST_HOST_LOOP_H
#define LAGSCOPE_TEST_HOST_LOOP_H

#include "lagscope.h"

#include <stdint.h>

typedef struct host_loop host_loop;
typedef void (*host_frame_fn)(host_loop *loop, uint64_t frame, void *user);
typedef int (*host_done_fn)(void *user);

host_loop *host_loop_new(double fps);
void host_loop_free(host_loop *loop);
/* lagscope_post_main_fn: user is the host_loop. Refuses when the queue is full. */
int host_loop_post(lagscope_main_fn fn, void *arg, void *user);
/* Runs frames on the calling thread until done(user) is true or max_seconds pass; calls
 * lagscope_frame() after each frame. Returns 1 if done() ended it, 0 on the time bound. */
int host_loop_run(host_loop *loop, host_frame_fn frame, host_done_fn done, void *user,
                  double max_seconds);

uint64_t test_now_ns(void);
/* Spins on the clock in a named, non-inlined function so stacks show it. */
void test_stall_busy(uint32_t ms);
/* Threads in this process, from /proc/self/task. */
int test_thread_count(void);
/* Threads whose name starts with prefix (lagscope's are "lagscope-..."). */
int test_thread_count_named(const char *prefix);

#endif
