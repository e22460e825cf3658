#define _GNU_SOURCE
#include "host_loop.h"

#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define QUEUE_MAX 64

struct host_loop {
  double fps;
  int wake_fd;
  pthread_mutex_t lock;
  struct {
    lagscope_main_fn fn;
    void *arg;
  } queue[QUEUE_MAX];
  int queued;
};

uint64_t test_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) void test_stall_busy(uint32_t ms) {
  uint64_t end = test_now_ns() + (uint64_t)ms * 1000000u;
  volatile uint64_t spins = 0;
  while (test_now_ns() < end) spins++;
}

int test_thread_count(void) {
  DIR *d = opendir("/proc/self/task");
  int n = 0;
  if (d == NULL) return -1;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

int test_thread_count_named(const char *prefix) {
  DIR *d = opendir("/proc/self/task");
  int n = 0;
  if (d == NULL) return -1;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    char path[300], name[64] = "";
    snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (f == NULL) continue; /* exited meanwhile */
    if (fgets(name, sizeof(name), f) != NULL && strncmp(name, prefix, strlen(prefix)) == 0) n++;
    fclose(f);
  }
  closedir(d);
  return n;
}

host_loop *host_loop_new(double fps) {
  host_loop *loop = calloc(1, sizeof(*loop));
  loop->fps = fps;
  loop->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  pthread_mutex_init(&loop->lock, NULL);
  return loop;
}

void host_loop_free(host_loop *loop) {
  close(loop->wake_fd);
  pthread_mutex_destroy(&loop->lock);
  free(loop);
}

int host_loop_post(lagscope_main_fn fn, void *arg, void *user) {
  host_loop *loop = user;
  pthread_mutex_lock(&loop->lock);
  int ok = loop->queued < QUEUE_MAX;
  if (ok) {
    loop->queue[loop->queued].fn = fn;
    loop->queue[loop->queued].arg = arg;
    loop->queued++;
  }
  pthread_mutex_unlock(&loop->lock);
  if (!ok) return -1;
  uint64_t one = 1;
  (void)!write(loop->wake_fd, &one, sizeof(one));
  return 0;
}

static void drain(host_loop *loop) {
  uint64_t count;
  (void)!read(loop->wake_fd, &count, sizeof(count));
  pthread_mutex_lock(&loop->lock);
  int n = loop->queued;
  lagscope_main_fn fns[QUEUE_MAX];
  void *args[QUEUE_MAX];
  for (int i = 0; i < n; i++) fns[i] = loop->queue[i].fn, args[i] = loop->queue[i].arg;
  loop->queued = 0;
  pthread_mutex_unlock(&loop->lock);
  for (int i = 0; i < n; i++) fns[i](args[i]);
}

/* Waits for the next frame's time, running posted work as it arrives. */
static void wait_until(host_loop *loop, uint64_t deadline) {
  for (uint64_t now; (now = test_now_ns()) < deadline;) {
    struct pollfd p = {.fd = loop->wake_fd, .events = POLLIN};
    int timeout_ms = (int)((deadline - now + 999999u) / 1000000u);
    if (poll(&p, 1, timeout_ms) > 0) drain(loop);
  }
}

int host_loop_run(host_loop *loop, host_frame_fn frame, host_done_fn done, void *user,
                  double max_seconds) {
  uint64_t period = (uint64_t)(1e9 / loop->fps), start = test_now_ns();
  uint64_t end = start + (uint64_t)(max_seconds * 1e9), next = start;
  for (uint64_t i = 0; test_now_ns() < end; i++) {
    drain(loop);
    if (done != NULL && done(user)) return 1;
    if (frame != NULL) frame(loop, i, user);
    lagscope_frame();
    next += period;
    uint64_t now = test_now_ns();
    if (next < now) next = now; /* after a stall, do not rush to catch up */
    wait_until(loop, next);
  }
  return 0;
}
