/* The event loop's own wait (core/linux/loop_wait.c), learnt from real threads blocked in poll,
 * select and epoll_wait: an fd in two answered waits is the loop's own, a wait on nothing but
 * such fds is the loop's, and a wait that also holds another fd (a child's pipe, a private
 * context) is not, nor a number reused for a pipe. */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"
#include "linux/linux.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef enum { BY_POLL, BY_SELECT, BY_EPOLL } wait_kind;

typedef struct waiter {
  wait_kind kind;
  int fds[2];
  int count;
  int stop_fd; /* written to end the wait */
  _Atomic int32_t tid;
  pthread_t thread;
} waiter;

static void *wait_forever(void *arg) {
  waiter *w = arg;
  atomic_store(&w->tid, (int32_t)syscall(SYS_gettid));
  if (w->kind == BY_POLL) {
    struct pollfd p[3];
    for (int i = 0; i < w->count; i++) p[i] = (struct pollfd){.fd = w->fds[i], .events = POLLIN};
    p[w->count] = (struct pollfd){.fd = w->stop_fd, .events = POLLIN};
    poll(p, (nfds_t)w->count + 1, -1);
  } else if (w->kind == BY_SELECT) {
    fd_set set;
    FD_ZERO(&set);
    int top = w->stop_fd;
    FD_SET(w->stop_fd, &set);
    for (int i = 0; i < w->count; i++) {
      FD_SET(w->fds[i], &set);
      if (w->fds[i] > top) top = w->fds[i];
    }
    select(top + 1, &set, NULL, NULL, NULL);
  } else {
    struct epoll_event e;
    epoll_wait(w->fds[0], &e, 1, -1);
  }
  return NULL;
}

/* Starts w and returns once its thread is blocked in its wait (bounded). */
static void start(waiter *w) {
  atomic_store(&w->tid, 0);
  CHECK(pthread_create(&w->thread, NULL, wait_forever, w) == 0);
  for (int i = 0; i < 2000; i++) {
    int32_t tid = atomic_load(&w->tid);
    lagscope__linux_thread_state st;
    if (tid != 0 && lagscope__linux_read_thread_state(tid, &st) == 0 && !st.running &&
        st.nr >= 0 && lagscope__syscall_classify((int32_t)st.nr, &(int){0}) == LAGSCOPE__SYSCALL_POLL)
      return;
    usleep(1000);
  }
  CHECK_MSG(0, "the waiter (kind %d) never blocked in its wait", (int)w->kind);
}

static void finish(waiter *w) {
  uint64_t one = 1;
  CHECK(write(w->stop_fd, &one, sizeof one) == sizeof one);
  CHECK(pthread_join(w->thread, NULL) == 0);
  uint64_t count;
  CHECK(read(w->stop_fd, &count, sizeof count) == sizeof count);
}

/* The waiter's blocked call as a captured stack would hold it. */
static lagscope__stack captured(const waiter *w) {
  lagscope__linux_thread_state st;
  CHECK(lagscope__linux_read_thread_state(atomic_load(&w->tid), &st) == 0);
  lagscope__stack s;
  memset(&s, 0, sizeof s);
  s.run_state = LAGSCOPE__RUN_SYSCALL;
  s.syscall = (int32_t)st.nr;
  memcpy(s.args, st.args, sizeof s.args);
  return s;
}

/* A thread running when it is looked at (this one, at itself): nothing to note. */
static void a_running_thread_is_not_noted(void) {
  CHECK_EQ_INT(lagscope__loop_wait_note(lagscope__thread_id()), 0);
}

/* Learns w's wait as the loop's: noted at two pings both answered at once. */
static void learn(waiter *w, int answered) {
  for (int i = 0; i < 2; i++) {
    lagscope__loop_wait_note(atomic_load(&w->tid));
    lagscope__loop_wait_confirm(answered);
  }
}

static int is_own(waiter *w) {
  lagscope__stack s = captured(w);
  return lagscope__loop_wait_is_own(&s);
}

static void by(wait_kind kind) {
  lagscope__loop_wait_reset();
  int wake = eventfd(0, EFD_CLOEXEC), other = eventfd(0, EFD_CLOEXEC), stop = eventfd(0, EFD_CLOEXEC);
  int epoll = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event e = {.events = EPOLLIN};
  CHECK(epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &e) == 0 && epoll_ctl(epoll, EPOLL_CTL_ADD, stop, &e) == 0);
  waiter loop = {.kind = kind, .fds = {kind == BY_EPOLL ? epoll : wake}, .count = 1, .stop_fd = stop};

  /* Seen once, or in pings not answered at once: not yet the loop's. */
  start(&loop);
  CHECK(!is_own(&loop));
  learn(&loop, 0);
  CHECK_MSG(!is_own(&loop) && !lagscope__loop_wait_known(), "learnt from pings never answered");
  CHECK_MSG(lagscope__loop_wait_note(atomic_load(&loop.tid)) == 1, "a wait on fds is noted");
  lagscope__loop_wait_confirm(1);
  CHECK_MSG(!is_own(&loop), "one answered wait is not enough");
  lagscope__loop_wait_note(atomic_load(&loop.tid));
  lagscope__loop_wait_confirm(1);
  CHECK_MSG(lagscope__loop_wait_known() && is_own(&loop), "two answered waits make it the loop's");
  finish(&loop);

  /* Another wait on the same fds is the loop's too (a modal loop); one with another fd is not. */
  waiter modal = loop;
  start(&modal);
  CHECK(is_own(&modal));
  finish(&modal);
  if (kind != BY_EPOLL) {
    waiter more = {.kind = kind, .fds = {wake, other}, .count = 2, .stop_fd = stop};
    start(&more);
    CHECK_MSG(!is_own(&more), "a wait that also holds a foreign fd is the loop's");
    finish(&more);
  }
  waiter foreign = {.kind = kind, .fds = {other}, .count = 1, .stop_fd = stop};
  int other_epoll = epoll_create1(EPOLL_CLOEXEC);
  if (kind == BY_EPOLL) foreign.fds[0] = other_epoll;
  CHECK(epoll_ctl(other_epoll, EPOLL_CTL_ADD, stop, &e) == 0);
  start(&foreign);
  CHECK_MSG(!is_own(&foreign), "a wait on other fds is the loop's");
  finish(&foreign);

  /* An fd number closed and opened again as a pipe is another fd (its inode says). */
  int number = loop.fds[0];
  close(number);
  int pipe_fds[2];
  CHECK(pipe2(pipe_fds, O_CLOEXEC) == 0);
  if (pipe_fds[0] == number && kind != BY_EPOLL) { /* epoll_wait on a pipe fails at once */
    start(&loop);
    CHECK_MSG(!is_own(&loop), "a reused fd number was taken for the loop's");
    finish(&loop);
  }
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  close(other);
  close(other_epoll);
  close(stop);
  if (kind != BY_EPOLL) close(epoll);
  else close(wake);
}

int main(void) {
  a_running_thread_is_not_noted();
  by(BY_POLL);
  by(BY_SELECT);
  by(BY_EPOLL);
  printf("loop_wait: ok\n");
  return 0;
}
