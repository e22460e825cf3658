/* The event loop's own wait, learnt from the loop itself. A main thread blocked in poll or
 * epoll_wait is either idle in its loop (waiting for work) or blocked on something it waits for
 * (a child's pipe, a private D-Bus context, a socket): only the fds tell which, and no API says
 * which fds are the loop's. So the monitor looks at what the main thread waits on as it posts a
 * ping, and when the ping is answered at once, that wait was the loop's: the ping was work and
 * woke it. An fd seen so twice is the loop's own. A later wait on nothing but the loop's own
 * fds, with a ping unanswered, is a loop that does not run lagscope's queue (a modal loop, a
 * nested loop running some sources only): idle, not io.
 *
 * Only the monitor thread calls these (no lock). An fd is known by its number and its inode, so
 * a number closed and reused for a pipe, a socket or a file is another fd. (eventfds, timerfds
 * and epoll instances share one anonymous inode: a number reused for another of the same kind
 * passes for the old one.) No allocation. */
#define _GNU_SOURCE
#include "../internal.h"
#include "linux.h"

#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>

#define WAIT_FDS_MAX 8    /* fds of one wait looked at */
#define LOOP_FDS_MAX 16   /* fds kept as the loop's */
#define SEEN_TO_KEEP 2    /* answered waits an fd must be in */

typedef struct fd_identity {
  int fd;
  dev_t dev;
  ino_t ino;
} fd_identity;

typedef struct loop_fd {
  fd_identity id;
  uint32_t seen;
} loop_fd;

static loop_fd loop_fds[LOOP_FDS_MAX];
static uint32_t loop_fds_len;
static fd_identity noted[WAIT_FDS_MAX]; /* the wait seen at the last ping, until confirmed */
static uint32_t noted_len;

void lagscope__loop_wait_reset(void) { loop_fds_len = noted_len = 0; }

/* By its /proc link rather than fstat(fd): the fd is the app's, and the link names the same
 * object without touching the descriptor itself (no sanitizer sees an access to it). */
static int identify(int fd, fd_identity *out) {
  char path[48];
  struct stat st;
  if (fd < 0) return -1;
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  if (stat(path, &st) != 0) return -1;
  out->fd = fd;
  out->dev = st.st_dev;
  out->ino = st.st_ino;
  return 0;
}

/* The fds of a blocked poll, select or epoll_wait (the epoll instance itself), by identity.
 * Returns how many; 0 when the call is none of those or its arrays cannot be read. */
static uint32_t wait_fds(int32_t syscall, const uintptr_t *args, fd_identity *out) {
  int fd_arg;
  if (lagscope__syscall_classify(syscall, &fd_arg) != LAGSCOPE__SYSCALL_POLL) return 0;
  const char *name = lagscope__syscall_name(syscall);
  uint32_t n = 0;
  if (fd_arg >= 0) return identify((int)args[fd_arg], &out[0]) == 0 ? 1 : 0; /* epoll */
  if (strcmp(name, "poll") == 0 || strcmp(name, "ppoll") == 0) {
    if (args[1] == 0 || args[1] > WAIT_FDS_MAX) return 0; /* a loop waits on a few */
    for (uintptr_t i = 0; i < args[1]; i++) {
      struct pollfd p;
      if (lagscope__linux_read_own(args[0] + i * sizeof(p), &p, sizeof(p)) != 0) return 0;
      if (p.fd < 0) continue; /* ignored by poll */
      if (identify(p.fd, &out[n]) != 0) return 0;
      n++;
    }
    return n;
  }
  fd_set set; /* select, pselect6: the read set */
  if (args[1] == 0 || args[0] > FD_SETSIZE || lagscope__linux_read_own(args[1], &set, sizeof(set)) != 0)
    return 0;
  for (int fd = 0; fd < (int)args[0]; fd++) {
    if (!FD_ISSET(fd, &set)) continue;
    if (n == WAIT_FDS_MAX || identify(fd, &out[n]) != 0) return 0;
    n++;
  }
  return n;
}

int lagscope__loop_wait_note(int32_t tid) {
  noted_len = 0;
  lagscope__linux_thread_state state;
  if (lagscope__linux_read_thread_state(tid, &state) != 0 || state.running || state.nr < 0)
    return 0;
  noted_len = wait_fds((int32_t)state.nr, state.args, noted);
  return noted_len > 0;
}

static loop_fd *find(const fd_identity *id) {
  for (uint32_t i = 0; i < loop_fds_len; i++)
    if (loop_fds[i].id.fd == id->fd && loop_fds[i].id.dev == id->dev &&
        loop_fds[i].id.ino == id->ino)
      return &loop_fds[i];
  return NULL;
}

void lagscope__loop_wait_confirm(int answered_at_once) {
  for (uint32_t i = 0; answered_at_once && i < noted_len; i++) {
    loop_fd *known = find(&noted[i]);
    if (known == NULL && loop_fds_len < LOOP_FDS_MAX) {
      known = &loop_fds[loop_fds_len++];
      known->id = noted[i];
      known->seen = 0;
    }
    if (known != NULL) known->seen++;
  }
  noted_len = 0;
}

int lagscope__loop_wait_known(void) {
  for (uint32_t i = 0; i < loop_fds_len; i++)
    if (loop_fds[i].seen >= SEEN_TO_KEEP) return 1;
  return 0;
}

int lagscope__loop_wait_is_own(const lagscope__stack *stack) {
  if (stack->run_state != LAGSCOPE__RUN_SYSCALL || stack->syscall < 0) return 0;
  fd_identity ids[WAIT_FDS_MAX];
  uint32_t n = wait_fds(stack->syscall, stack->args, ids);
  for (uint32_t i = 0; i < n; i++) {
    const loop_fd *known = find(&ids[i]);
    if (known == NULL || known->seen < SEEN_TO_KEEP) return 0;
  }
  return n > 0;
}
