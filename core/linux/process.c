/* Process and thread sampling from /proc. Every file is read whole into a fixed buffer (a
 * bounded read: a file larger than the buffer is cut, and the parsers only look at the head);
 * the parsing itself lives in core/detect/usage.c so that tests can feed it odd text. */
#define _GNU_SOURCE
#include "../internal.h"
#include "linux.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define PROC_READ_MAX 4096
#define PATH_MAX_LEN 512

/* Where the process's /proc folder is; tests point it at a folder of odd files. */
static char proc_self[256] = "/proc/self";

void lagscope__process_set_root(const char *path) {
  snprintf(proc_self, sizeof(proc_self), "%s", path != NULL ? path : "/proc/self");
}

ssize_t lagscope__linux_read_small_file(const char *path, char *buf, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  size_t len = 0;
  while (len < size - 1) {
    ssize_t n = read(fd, buf + len, size - 1 - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      return -e;
    }
    if (n == 0) break;
    len += (size_t)n;
  }
  close(fd);
  buf[len] = '\0';
  return (ssize_t)len;
}

/* Reads up to PROC_READ_MAX - 1 bytes; returns the length, or -errno. */
static ssize_t read_small_file(const char *path, char *buf) {
  return lagscope__linux_read_small_file(path, buf, PROC_READ_MAX);
}

int lagscope__linux_read_own(uintptr_t address, void *out, size_t size) {
  struct iovec local = {out, size}, remote = {(void *)address, size};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)size ? 0 : -1;
}

static uint64_t ticks_to_ns(uint64_t ticks) {
  static long hz;
  if (hz <= 0) hz = sysconf(_SC_CLK_TCK);
  if (hz <= 0) hz = 100;
  return ticks * (1000000000u / (uint64_t)hz);
}

/* What a failed read of a thread's file means: the thread exited meanwhile (ENOENT), or
 * another failure (EPROC, its errno in *err). errno stops here: the usage reader's callers see
 * lagscope's codes only. */
static int thread_read_failed(ssize_t len, int *err) {
  if (len == -ENOENT || len == -ESRCH) return LAGSCOPE_ENOENT;
  *err = (int)-len;
  return LAGSCOPE_EPROC;
}

/* A thread's name and CPU time. 0; LAGSCOPE_ENOENT when it exited meanwhile; EPARSE; or EPROC
 * with *err. */
static int read_thread(int32_t tid, lagscope__thread_usage *t, int *err) {
  char path[PATH_MAX_LEN], buf[PROC_READ_MAX];
  snprintf(path, sizeof(path), "%s/task/%d/stat", proc_self, tid);
  ssize_t len = read_small_file(path, buf);
  if (len < 0) return thread_read_failed(len, err);
  uint64_t utime, stime;
  if (lagscope__parse_stat(buf, (size_t)len, t->name, sizeof(t->name), &t->state, &utime, &stime) != 0)
    return LAGSCOPE_EPARSE;
  t->tid = tid;
  t->system_id = (uint64_t)tid;
  t->cpu_ns = ticks_to_ns(utime + stime);
  /* schedstat has the run time in ns; stat's ticks are only 10 ms steps. */
  snprintf(path, sizeof(path), "%s/task/%d/schedstat", proc_self, tid);
  len = read_small_file(path, buf);
  uint64_t run_ns;
  if (len > 0 && lagscope__parse_first_u64(buf, (size_t)len, &run_ns) == 0) t->cpu_ns = run_ns;
  return 0;
}

/* The name the previous sample had for tid; *hint is where to look first (both samples list
 * the threads in the same order, so the look is one step almost always). NULL if none. */
static const char *previous_name(const lagscope__usage *previous, int32_t tid,
                                 uint32_t *hint) {
  if (previous == NULL || previous->threads_len == 0) return NULL;
  uint32_t n = previous->threads_len;
  for (uint32_t k = 0; k < n; k++) {
    uint32_t i = (*hint + k) % n;
    if (previous->threads[i].tid == tid) {
      *hint = i + 1;
      return previous->threads[i].name;
    }
  }
  return NULL;
}

/* A thread's CPU time from its CPU clock (one system call, no file), its name from the
 * previous sample or, for a thread it lacks, from comm. As read_thread. */
static int read_thread_light(int32_t tid, const lagscope__usage *previous,
                             uint32_t *hint, lagscope__thread_usage *t, int *err) {
  struct timespec ts;
  if (clock_gettime(lagscope__linux_thread_cpu_clock(tid), &ts) != 0) return LAGSCOPE_ENOENT; /* EINVAL: gone */
  t->tid = tid;
  t->system_id = (uint64_t)tid;
  t->state = '\0';
  t->cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  const char *known = previous_name(previous, tid, hint);
  if (known != NULL) {
    memcpy(t->name, known, sizeof(t->name));
    return 0;
  }
  char path[PATH_MAX_LEN];
  snprintf(path, sizeof(path), "%s/task/%d/comm", proc_self, tid);
  ssize_t len = lagscope__linux_read_small_file(path, t->name, sizeof(t->name));
  if (len < 0) return thread_read_failed(len, err);
  while (len > 0 && t->name[len - 1] == '\n') t->name[--len] = '\0';
  return 0;
}

typedef struct thread_listing {
  lagscope__usage *out;
  const lagscope__usage *previous;
  unsigned what;
  uint32_t hint;
  const char *path;
  char *why;
  size_t why_size;
  int rc;
} thread_listing;

static int note_thread(const char *name, int dir_fd, void *ctx) {
  (void)dir_fd;
  thread_listing *l = ctx;
  lagscope__usage *out = l->out;
  char *end;
  long tid = strtol(name, &end, 10);
  if (*end != '\0' || tid <= 0) return 1;
  out->thread_count++;
  if (out->threads_len >= LAGSCOPE__MAX_THREADS) return 1;
  lagscope__thread_usage *t = &out->threads[out->threads_len];
  int err = 0;
  int r = l->what & LAGSCOPE__USAGE_DETAIL
              ? read_thread((int32_t)tid, t, &err)
              : read_thread_light((int32_t)tid, l->previous, &l->hint, t, &err);
  if (r == LAGSCOPE_OK) {
    out->threads_len++;
  } else if (r == LAGSCOPE_ENOENT) {
    out->thread_count--; /* it exited between the listing and the open */
  } else if (l->rc == LAGSCOPE_OK) {
    lagscope__explain(l->why, l->why_size, "cannot read %s/%ld/%s: %s", l->path, tid,
                      l->what & LAGSCOPE__USAGE_DETAIL ? "stat" : "comm",
                      r == LAGSCOPE_EPARSE ? "unexpected format" : strerror(err));
    l->rc = r;
  }
  return 1;
}

static int read_threads(lagscope__usage *out, const lagscope__usage *previous,
                        unsigned what, char *why, size_t why_size) {
  char path[PATH_MAX_LEN];
  snprintf(path, sizeof(path), "%s/task", proc_self);
  thread_listing l = {out, previous, what, 0, path, why, why_size, LAGSCOPE_OK};
  int listed = lagscope__linux_each_name(path, note_thread, &l);
  if (listed < 0) {
    lagscope__explain(why, why_size, "cannot open %s: %s", path, strerror(-listed));
    return LAGSCOPE_EPROC;
  }
  return l.rc;
}

/* RSS from statm: its second number, in pages. A few µs, whatever the mappings. */
static int read_statm_rss(uint64_t *out) {
  char path[PATH_MAX_LEN], buf[PROC_READ_MAX];
  snprintf(path, sizeof(path), "%s/statm", proc_self);
  ssize_t len = read_small_file(path, buf);
  uint64_t size_and_resident[2];
  if (len <= 0 || lagscope__parse_u64s(buf, (size_t)len, size_and_resident, 2) != LAGSCOPE_OK)
    return -1;
  *out = size_and_resident[1] * (uint64_t)sysconf(_SC_PAGESIZE);
  return 0;
}

static int read_memory(lagscope__usage *out, int with_pss, char *why, size_t why_size) {
  char path[PATH_MAX_LEN], buf[PROC_READ_MAX];
  if (!with_pss && read_statm_rss(&out->rss_bytes) == 0) return LAGSCOPE_OK;
  snprintf(path, sizeof(path), "%s/smaps_rollup", proc_self);
  ssize_t len = read_small_file(path, buf);
  if (len > 0 && lagscope__parse_kb_field(buf, (size_t)len, "Rss:", &out->rss_bytes) == 0) {
    lagscope__parse_kb_field(buf, (size_t)len, "Pss:", &out->pss_bytes);
    return LAGSCOPE_OK;
  }
  /* Kernels before 4.14 have no smaps_rollup: RSS from status, no PSS. */
  snprintf(path, sizeof(path), "%s/status", proc_self);
  len = read_small_file(path, buf);
  if (len < 0) {
    lagscope__explain(why, why_size, "cannot read %s: %s", path, strerror((int)-len));
    return LAGSCOPE_EPROC;
  }
  if (lagscope__parse_kb_field(buf, (size_t)len, "VmRSS:", &out->rss_bytes) != 0) {
    lagscope__explain(why, why_size, "%s has no readable VmRSS line", path);
    return LAGSCOPE_EPARSE;
  }
  return LAGSCOPE_OK;
}

int lagscope__usage_read(lagscope__usage *out,
                                  const lagscope__usage *previous, unsigned what,
                                  char *why, size_t why_size) {
  out->time_ns = lagscope__now_ns();
  out->thread_count = 0;
  out->threads_len = 0;
  out->rss_bytes = out->pss_bytes = 0;
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  out->cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  int rc_threads = read_threads(out, previous, what, why, why_size);
  char why_memory[256] = "";
  int rc_memory = read_memory(out, (what & LAGSCOPE__USAGE_PSS) != 0, why_memory, sizeof(why_memory));
  if (rc_threads != LAGSCOPE_OK) return rc_threads;
  if (rc_memory != LAGSCOPE_OK) lagscope__explain(why, why_size, "%s", why_memory);
  return rc_memory;
}

void lagscope__process_raw_name(char *out, size_t size) {
  char path[PATH_MAX_LEN];
  snprintf(path, sizeof(path), "%s/comm", proc_self);
  ssize_t len = lagscope__linux_read_small_file(path, out, size);
  if (len < 0) len = 0;
  while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == ' ')) len--;
  out[len] = '\0';
}

int32_t lagscope__process_id(void) { return (int32_t)getpid(); }

long lagscope__user_id(void) { return (long)getuid(); }

/* The XDG base directory spec: a relative $XDG_STATE_HOME is invalid and ignored. */
void lagscope__state_root(char *out, size_t size) {
  const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
  if (state != NULL && state[0] == '/')
    snprintf(out, size, "%s/lagscope", state);
  else if (home != NULL && home[0] == '/' && home[1] != '\0')
    snprintf(out, size, "%s/.local/state/lagscope", home);
  else
    snprintf(out, size, "%s", "");
}

int lagscope__thread_queued_ns(uint64_t *out) {
  char buf[PROC_READ_MAX];
  ssize_t len = read_small_file("/proc/thread-self/schedstat", buf);
  uint64_t on_cpu_and_queued[2];
  if (len <= 0 || lagscope__parse_u64s(buf, (size_t)len, on_cpu_and_queued, 2) != LAGSCOPE_OK)
    return LAGSCOPE_ENOENT;
  *out = on_cpu_and_queued[1];
  return LAGSCOPE_OK;
}

int lagscope__thread_cpu_ns(int32_t tid, uint64_t *out) {
  struct timespec ts;
  if (tid <= 0 || clock_gettime(lagscope__linux_thread_cpu_clock(tid), &ts) != 0)
    return LAGSCOPE_ENOENT; /* EINVAL: gone */
  *out = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  return LAGSCOPE_OK;
}
