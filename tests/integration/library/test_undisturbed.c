/* lagscope never changes what the app does, and never shortens the stall it measures.
 * argv[1] picks the case:
 *   waiters          ten threads wait in nanosleep, clock_nanosleep, usleep, poll, ppoll,
 *                    select, epoll_wait, sem_timedwait, pthread_cond_timedwait and read on a
 *                    pipe, each checking its result, errno and elapsed time, while the main
 *                    thread hangs 20 times for 400 ms (busy and asleep): no EINTR, no early
 *                    return, and each sleeping stall is whole and reported at >= 350 ms
 *   heartbeat-sleep  a heartbeat-mode main thread sleeps 600 ms, 5 times: each sleep lasts
 *                    at least 600 ms and each hang at least 550 ms
 *   stall-usleep     the main thread in usleep(800 ms)                     } each hang is
 *   stall-chain      the main thread waits for a mutex held by a thread     } reported at
 *                    blocked in read() on a pipe whose writer sleeps 800 ms } 750 ms or more
 *   stall-recv       the main thread in recv() from a local server that     }
 *                    answers after 800 ms                                   }
 * (With a signal to every thread at a hang's start, these were cut to ~250-285 ms.) */
#define _GNU_SOURCE
#include "check.h"
#include "host_loop.h"
#include "recorder.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 150u
#define NS_PER_MS 1000000ull

static _Atomic int stop_waiters;

/* ---- the waiters ---- */

enum waiter_kind { W_NANOSLEEP, W_CLOCK_NANOSLEEP, W_USLEEP, W_POLL, W_PPOLL, W_SELECT,
                   W_EPOLL, W_SEM, W_COND, W_READ, WAITER_KINDS };
static const char *waiter_names[WAITER_KINDS] = {
    "nanosleep", "clock_nanosleep", "usleep", "poll", "ppoll", "select", "epoll_wait",
    "sem_timedwait", "pthread_cond_timedwait", "read"};

typedef struct waiter {
  int kind;
  int fds[2];   /* an idle pipe to wait on (W_READ: a writer writes every WAIT_MS) */
  int epoll_fd;
  sem_t sem;
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  unsigned calls, eintr, early, other;
  char last_problem[160];
} waiter;

static void deadline_in(clockid_t clock, uint32_t ms, struct timespec *ts) {
  clock_gettime(clock, ts);
  ts->tv_nsec += (long)(ms % 1000) * 1000000L;
  ts->tv_sec += ms / 1000 + ts->tv_nsec / 1000000000L;
  ts->tv_nsec %= 1000000000L;
}

/* One wait of WAIT_MS; returns 0 when it ended as it should, else errno (or -1). */
static int wait_once(waiter *w) {
  struct timespec ts = {0, (long)WAIT_MS * 1000000L};
  switch (w->kind) {
    case W_NANOSLEEP: return nanosleep(&ts, NULL) == 0 ? 0 : errno;
    case W_CLOCK_NANOSLEEP: return clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
    case W_USLEEP: return usleep(WAIT_MS * 1000) == 0 ? 0 : errno;
    case W_POLL: {
      struct pollfd p = {.fd = w->fds[0], .events = POLLIN};
      int n = poll(&p, 1, (int)WAIT_MS);
      return n == 0 ? 0 : n < 0 ? errno : -1;
    }
    case W_PPOLL: {
      struct pollfd p = {.fd = w->fds[0], .events = POLLIN};
      int n = ppoll(&p, 1, &ts, NULL);
      return n == 0 ? 0 : n < 0 ? errno : -1;
    }
    case W_SELECT: {
      fd_set set;
      FD_ZERO(&set);
      FD_SET(w->fds[0], &set);
      struct timeval tv = {0, (long)WAIT_MS * 1000};
      int n = select(w->fds[0] + 1, &set, NULL, NULL, &tv);
      return n == 0 ? 0 : n < 0 ? errno : -1;
    }
    case W_EPOLL: {
      struct epoll_event e;
      int n = epoll_wait(w->epoll_fd, &e, 1, (int)WAIT_MS);
      return n == 0 ? 0 : n < 0 ? errno : -1;
    }
    case W_SEM: {
      struct timespec deadline;
      deadline_in(CLOCK_REALTIME, WAIT_MS, &deadline);
      int rc = sem_timedwait(&w->sem, &deadline);
      return rc == -1 && errno == ETIMEDOUT ? 0 : rc == 0 ? -1 : errno;
    }
    case W_COND: {
      struct timespec deadline;
      deadline_in(CLOCK_REALTIME, WAIT_MS, &deadline);
      pthread_mutex_lock(&w->mutex);
      int rc = pthread_cond_timedwait(&w->cond, &w->mutex, &deadline);
      pthread_mutex_unlock(&w->mutex);
      return rc == ETIMEDOUT ? 0 : rc == 0 ? -1 : rc;
    }
    case W_READ: {
      char c;
      ssize_t n = read(w->fds[0], &c, 1);
      return n == 1 ? 0 : n < 0 ? errno : -1;
    }
  }
  return -1;
}

static void *waiter_thread(void *arg) {
  waiter *w = arg;
  while (!atomic_load(&stop_waiters)) {
    uint64_t start = test_now_ns();
    int rc = wait_once(w);
    uint64_t elapsed = test_now_ns() - start;
    w->calls++;
    /* A read returns when the writer writes: its writer's sleep is checked as its own. The
     * rest time out; the realtime deadlines may be a clock tick off the monotonic clock. */
    int early = w->kind != W_READ && elapsed + NS_PER_MS < WAIT_MS * NS_PER_MS;
    if (rc == EINTR) w->eintr++;
    else if (rc != 0) w->other++;
    else if (early) w->early++;
    if (rc != 0 || early)
      snprintf(w->last_problem, sizeof(w->last_problem), "%s: result %d (%s) after %.1f ms",
               waiter_names[w->kind], rc, rc > 0 ? strerror(rc) : "-", (double)elapsed / 1e6);
  }
  return NULL;
}

/* Writes a byte to the read waiter's pipe every WAIT_MS, checking its own sleep. */
static void *writer_thread(void *arg) {
  waiter *w = arg;
  while (!atomic_load(&stop_waiters)) {
    struct timespec ts = {0, (long)WAIT_MS * 1000000L};
    uint64_t start = test_now_ns();
    int rc = nanosleep(&ts, NULL);
    if (rc != 0 || test_now_ns() - start < WAIT_MS * NS_PER_MS) w->early++;
    (void)!write(w->fds[1], "x", 1);
  }
  return NULL;
}

/* ---- the main loop ---- */

typedef struct scenario {
  recorder rec;
  int heartbeat;
  void (*stall)(struct scenario *s);
  uint32_t stall_ms;
  unsigned stalls_wanted, stalls_done;
  uint64_t next_stall_frame;
  uint64_t last_stall_end_ns;
  uint64_t stall_ns[32];  /* each stall as measured around it */
} scenario;

static void stall_frame(host_loop *loop, uint64_t frame, void *user) {
  (void)loop;
  scenario *s = user;
  if (s->heartbeat) lagscope_heartbeat();
  if (frame < s->next_stall_frame || s->stalls_done == s->stalls_wanted) return;
  /* The next stall only after the last one's hang has ended (one hang each), or 2 s after it,
   * so that a stall that made no hang shows as a missing hang, not as a test that hangs. */
  if (recorder_count(&s->rec, LAGSCOPE_EVENT_HANG_ENDED) < (int)s->stalls_done &&
      test_now_ns() - s->last_stall_end_ns < 2000000000u)
    return;
  uint64_t start = test_now_ns();
  s->stall(s);
  s->last_stall_end_ns = test_now_ns();
  if (s->stalls_done < 32) s->stall_ns[s->stalls_done] = s->last_stall_end_ns - start;
  s->stalls_done++;
  s->next_stall_frame = frame + 12; /* 200 ms of frames between stalls */
}

static int all_hangs_ended(void *user) {
  scenario *s = user;
  return s->stalls_done == s->stalls_wanted &&
         recorder_count(&s->rec, LAGSCOPE_EVENT_HANG_ENDED) >= (int)s->stalls_wanted;
}

static void run(scenario *s, double max_seconds) {
  char dir[] = "/tmp/lagscope-undisturbed-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  host_loop *loop = host_loop_new(60);
  lagscope_config c = lagscope_config_default();
  if (!s->heartbeat) c.post_main = host_loop_post, c.post_main_user = loop;
  c.on_event = recorder_on_event, c.on_event_user = &s->rec;
  c.server = 0, c.hud = 0, c.report_dir = dir;
  /* A hang starts when the unanswered ping was posted: pinging every 10 ms, a stall's hang
   * starts at most ~10 ms after it (the default 50 ms would make that bound 50 ms). */
  c.ping_interval_ms = 10;
  CHECK_EQ_INT(lagscope_start(&c), 0);
  host_loop_run(loop, stall_frame, all_hangs_ended, s, max_seconds);
  CHECK_EQ_INT(lagscope_stop(), 0);
  host_loop_free(loop);
  char rm[128];
  snprintf(rm, sizeof(rm), "rm -rf %s", dir);
  CHECK(system(rm) == 0);
  CHECK_MSG(s->stalls_done == s->stalls_wanted, "%u of %u stalls done", s->stalls_done,
            s->stalls_wanted);
  CHECK_MSG(s->rec.ended_len == (int)s->stalls_wanted, "%d hangs for %u stalls", s->rec.ended_len,
            s->stalls_wanted);
}

static double hang_ms(const scenario *s, int i) {
  return (double)s->rec.ended[i].as.hang_ended.duration_ns / 1e6;
}

/* ---- stalls ---- */

static void stall_busy_or_sleep(scenario *s) {
  if (s->stalls_done % 2 == 0) test_stall_busy(s->stall_ms);
  else usleep(s->stall_ms * 1000);
}

static void stall_usleep(scenario *s) { usleep(s->stall_ms * 1000); }

/* The chain: keeper holds the mutex while blocked in read() on a pipe that writer fills after
 * sleeping stall_ms; main waits for the mutex. */
static pthread_mutex_t chain_mutex = PTHREAD_MUTEX_INITIALIZER;
static int chain_pipe[2];
static _Atomic int keeper_holds;
static void *keeper(void *arg) {
  (void)arg;
  pthread_mutex_lock(&chain_mutex);
  atomic_store(&keeper_holds, 1);
  char c;
  (void)!read(chain_pipe[0], &c, 1);
  pthread_mutex_unlock(&chain_mutex);
  return NULL;
}
static void *late_writer(void *arg) {
  uint32_t ms = *(uint32_t *)arg;
  usleep(ms * 1000);
  (void)!write(chain_pipe[1], "x", 1);
  return NULL;
}
static void stall_chain(scenario *s) {
  CHECK(pipe(chain_pipe) == 0);
  atomic_store(&keeper_holds, 0);
  pthread_t k, w;
  pthread_create(&k, NULL, keeper, NULL);
  while (!atomic_load(&keeper_holds)) {}
  pthread_create(&w, NULL, late_writer, &s->stall_ms);
  pthread_mutex_lock(&chain_mutex);
  pthread_mutex_unlock(&chain_mutex);
  pthread_join(k, NULL);
  pthread_join(w, NULL);
  close(chain_pipe[0]);
  close(chain_pipe[1]);
}

/* A local server on 127.0.0.1, port 0: accepts, sleeps stall_ms, answers one byte. */
static int server_fd;
static void *late_server(void *arg) {
  uint32_t ms = *(uint32_t *)arg;
  int c = accept(server_fd, NULL, NULL);
  char byte;
  (void)!read(c, &byte, 1);
  usleep(ms * 1000);
  (void)!write(c, "y", 1);
  close(c);
  return NULL;
}
static void stall_recv(scenario *s) {
  server_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(a);
  CHECK(bind(server_fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(server_fd, 1) == 0);
  CHECK(getsockname(server_fd, (struct sockaddr *)&a, &len) == 0);
  pthread_t t;
  pthread_create(&t, NULL, late_server, &s->stall_ms);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  CHECK(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
  CHECK(write(fd, "q", 1) == 1);
  char byte;
  ssize_t n = recv(fd, &byte, 1, 0);
  CHECK_MSG(n == 1, "recv: %zd (%s)", n, n < 0 ? strerror(errno) : "");
  pthread_join(t, NULL);
  close(fd);
  close(server_fd);
}

/* ---- cases ---- */

static void waiters(void) {
  static waiter w[WAITER_KINDS];
  pthread_t threads[WAITER_KINDS], writer;
  for (int k = 0; k < WAITER_KINDS; k++) {
    w[k].kind = k;
    CHECK(pipe(w[k].fds) == 0);
    w[k].epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event e = {.events = EPOLLIN};
    CHECK(epoll_ctl(w[k].epoll_fd, EPOLL_CTL_ADD, w[k].fds[0], &e) == 0);
    sem_init(&w[k].sem, 0, 0);
    pthread_mutex_init(&w[k].mutex, NULL);
    pthread_cond_init(&w[k].cond, NULL);
    CHECK(pthread_create(&threads[k], NULL, waiter_thread, &w[k]) == 0);
  }
  CHECK(pthread_create(&writer, NULL, writer_thread, &w[W_READ]) == 0);

  static scenario s;
  recorder_init(&s.rec);
  s.stall = stall_busy_or_sleep;
  s.stall_ms = 400;
  s.stalls_wanted = 20;
  run(&s, 90);

  atomic_store(&stop_waiters, 1);
  for (int k = 0; k < WAITER_KINDS; k++) pthread_join(threads[k], NULL);
  pthread_join(writer, NULL);
  unsigned problems = 0;
  for (int k = 0; k < WAITER_KINDS; k++) {
    printf("%-24s %4u calls, %u EINTR, %u early, %u other%s%s\n", waiter_names[k], w[k].calls,
           w[k].eintr, w[k].early, w[k].other, w[k].last_problem[0] ? ": " : "",
           w[k].last_problem);
    problems += w[k].eintr + w[k].early + w[k].other;
    CHECK(w[k].calls >= 20);
  }
  for (int i = 0; i < s.rec.ended_len; i++)
    if (i % 2 == 1) /* the sleeping stalls: the hang is the sleep, not a signal-cut part of it */
      CHECK_MSG(hang_ms(&s, i) >= 350 && (double)s.stall_ns[i] / 1e6 >= 400,
                "stall %d: slept %.1f ms, hang %.1f ms", i, (double)s.stall_ns[i] / 1e6,
                hang_ms(&s, i));
  printf("%u hangs; %u problems in the waiters\n", s.stalls_done, problems);
  CHECK_EQ_INT(problems, 0);
  recorder_destroy(&s.rec);
}

static void heartbeat_sleep(void) {
  static scenario s;
  recorder_init(&s.rec);
  s.heartbeat = 1;
  s.stall = stall_usleep;
  s.stall_ms = 600;
  s.stalls_wanted = 5;
  run(&s, 60);
  for (int i = 0; i < 5; i++) {
    printf("sleep %d: %.1f ms, hang %.1f ms\n", i, (double)s.stall_ns[i] / 1e6, hang_ms(&s, i));
    CHECK((double)s.stall_ns[i] / 1e6 >= 600);
    CHECK(hang_ms(&s, i) >= 550);
  }
  recorder_destroy(&s.rec);
}

static void one_stall(void (*stall)(scenario *), const char *what) {
  static scenario s;
  recorder_init(&s.rec);
  s.stall = stall;
  s.stall_ms = 800;
  s.stalls_wanted = 1;
  run(&s, 30);
  printf("%s: stalled %.1f ms, hang reported %.1f ms\n", what, (double)s.stall_ns[0] / 1e6,
         hang_ms(&s, 0));
  CHECK((double)s.stall_ns[0] / 1e6 >= 800);
  CHECK(hang_ms(&s, 0) >= 750);
  recorder_destroy(&s.rec);
}

int main(int argc, char **argv) {
  CHECK(argc == 2);
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (strcmp(argv[1], "waiters") == 0) waiters();
  else if (strcmp(argv[1], "heartbeat-sleep") == 0) heartbeat_sleep();
  else if (strcmp(argv[1], "stall-usleep") == 0) one_stall(stall_usleep, "usleep(800 ms)");
  else if (strcmp(argv[1], "stall-chain") == 0) one_stall(stall_chain, "mutex held across read()");
  else if (strcmp(argv[1], "stall-recv") == 0) one_stall(stall_recv, "recv() from a late server");
  else CHECK(!"unknown case");
  return 0;
}
