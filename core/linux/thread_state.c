/* What a thread is doing, from /proc/self/task/TID/syscall: "running" for a thread on the CPU
 * (or runnable), else the syscall it is blocked in with its six raw arguments, the user stack
 * pointer and the pc (proc(5)). The kernel reads it only while the thread is off the CPU, so
 * sp and pc are exactly where the thread will resume: its stack can be read from there without
 * stopping it. Also the names of the system calls a blocked thread is commonly in. */
#define _GNU_SOURCE
#include "../internal.h"
#include "linux.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SYSCALL_FILE_MAX 256 /* "nr" + 8 hex words of at most 18 characters */

static int parse_hex(const char **p, uintptr_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(*p, &end, 16);
  if (end == *p || errno != 0) return -1;
  *out = (uintptr_t)v;
  *p = end;
  return 0;
}

int lagscope__linux_parse_syscall(const char *text, lagscope__linux_thread_state *out) {
  memset(out, 0, sizeof(*out));
  if (strncmp(text, "running", 7) == 0) {
    out->running = 1;
    out->nr = -1;
    return 0;
  }
  char *end;
  errno = 0;
  long nr = strtol(text, &end, 10);
  if (end == text || errno != 0 || nr < -1) return -1;
  out->nr = nr;
  const char *p = end;
  if (nr >= 0) /* "nr a1 … a6 sp pc"; "-1 sp pc" when in no syscall */
    for (int i = 0; i < 6; i++)
      if (parse_hex(&p, &out->args[i]) != 0) return -1;
  if (parse_hex(&p, &out->sp) != 0 || parse_hex(&p, &out->pc) != 0) return -1;
  while (*p == ' ' || *p == '\n') p++;
  return *p == '\0' ? 0 : -1;
}

/* Reads a small /proc file of tid into text (NUL-terminated). 0, LAGSCOPE_ENOENT when the
 * thread is gone, LAGSCOPE_ESYS. */
static int read_task_file(int32_t tid, const char *name, char *text, size_t size) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, name);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ESRCH ? LAGSCOPE_ENOENT : LAGSCOPE_ESYS;
  ssize_t n;
  do n = read(fd, text, size - 1);
  while (n < 0 && errno == EINTR);
  int read_errno = errno;
  close(fd);
  if (n < 0) return read_errno == ESRCH ? LAGSCOPE_ENOENT : LAGSCOPE_ESYS;
  text[n] = '\0';
  return LAGSCOPE_OK;
}

int lagscope__linux_read_thread_state(int32_t tid, lagscope__linux_thread_state *out) {
  char text[SYSCALL_FILE_MAX];
  int rc = read_task_file(tid, "syscall", text, sizeof(text));
  if (rc != LAGSCOPE_OK) return rc;
  return lagscope__linux_parse_syscall(text, out) == 0 ? LAGSCOPE_OK : LAGSCOPE_ESYS;
}

int lagscope__linux_read_run_count(int32_t tid, uint64_t *count) {
  char text[SYSCALL_FILE_MAX];
  int rc = read_task_file(tid, "schedstat", text, sizeof(text));
  if (rc != LAGSCOPE_OK) return rc;
  unsigned long long on_cpu_ns, waiting_ns, runs;
  if (sscanf(text, "%llu %llu %llu", &on_cpu_ns, &waiting_ns, &runs) != 3) return LAGSCOPE_ESYS;
  *count = runs;
  return LAGSCOPE_OK;
}

int lagscope__linux_same_blocked_state(const lagscope__linux_thread_state *a,
                                       const lagscope__linux_thread_state *b) {
  return !a->running && !b->running && a->nr == b->nr && a->sp == b->sp && a->pc == b->pc &&
         memcmp(a->args, b->args, sizeof(a->args)) == 0;
}

/* ---- names ---- */

/* The calls a thread waits in, and the common ones around them; the report names others
 * "syscall_<nr>".
 * Some exist on x86_64 only (aarch64 has just the p-, 4- and at- forms). */
#define SYSCALL_NAME(name) {SYS_##name, #name},
static const struct {
  long nr;
  const char *name;
} syscall_names[] = {
    SYSCALL_NAME(read) SYSCALL_NAME(write) SYSCALL_NAME(readv) SYSCALL_NAME(writev)
    SYSCALL_NAME(pread64) SYSCALL_NAME(pwrite64) SYSCALL_NAME(preadv) SYSCALL_NAME(pwritev)
    SYSCALL_NAME(openat) SYSCALL_NAME(close) SYSCALL_NAME(ioctl) SYSCALL_NAME(fcntl)
    SYSCALL_NAME(fsync) SYSCALL_NAME(fdatasync) SYSCALL_NAME(sync_file_range)
    SYSCALL_NAME(flock) SYSCALL_NAME(ppoll) SYSCALL_NAME(pselect6) SYSCALL_NAME(epoll_pwait)
    SYSCALL_NAME(nanosleep) SYSCALL_NAME(clock_nanosleep) SYSCALL_NAME(futex)
    SYSCALL_NAME(wait4) SYSCALL_NAME(waitid) SYSCALL_NAME(connect) SYSCALL_NAME(accept)
    SYSCALL_NAME(accept4) SYSCALL_NAME(recvfrom) SYSCALL_NAME(sendto) SYSCALL_NAME(recvmsg)
    SYSCALL_NAME(sendmsg) SYSCALL_NAME(recvmmsg) SYSCALL_NAME(sendmmsg) SYSCALL_NAME(msgrcv)
    SYSCALL_NAME(msgsnd) SYSCALL_NAME(semtimedop) SYSCALL_NAME(rt_sigtimedwait)
    SYSCALL_NAME(rt_sigsuspend) SYSCALL_NAME(mmap) SYSCALL_NAME(munmap) SYSCALL_NAME(mprotect)
    SYSCALL_NAME(madvise) SYSCALL_NAME(brk) SYSCALL_NAME(clone) SYSCALL_NAME(execve)
    SYSCALL_NAME(exit) SYSCALL_NAME(exit_group) SYSCALL_NAME(getdents64)
    SYSCALL_NAME(newfstatat) SYSCALL_NAME(statx) SYSCALL_NAME(io_getevents)
    SYSCALL_NAME(io_uring_enter) SYSCALL_NAME(sched_yield) SYSCALL_NAME(splice)
    SYSCALL_NAME(sendfile) SYSCALL_NAME(copy_file_range) SYSCALL_NAME(fallocate)
    SYSCALL_NAME(ftruncate) SYSCALL_NAME(renameat) SYSCALL_NAME(unlinkat)
    SYSCALL_NAME(mkdirat) SYSCALL_NAME(getrandom) SYSCALL_NAME(membarrier)
    SYSCALL_NAME(process_vm_readv)
#ifdef SYS_poll
    SYSCALL_NAME(poll) SYSCALL_NAME(select) SYSCALL_NAME(epoll_wait) SYSCALL_NAME(pause)
    SYSCALL_NAME(open) SYSCALL_NAME(fork) SYSCALL_NAME(vfork)
    SYSCALL_NAME(stat) SYSCALL_NAME(fstat) SYSCALL_NAME(lstat) SYSCALL_NAME(rename)
    SYSCALL_NAME(unlink) SYSCALL_NAME(mkdir)
#endif
#ifdef SYS_epoll_pwait2
    SYSCALL_NAME(epoll_pwait2)
#endif
#ifdef SYS_futex_waitv
    SYSCALL_NAME(futex_waitv)
#endif
#ifdef SYS_clock_nanosleep_time64
    SYSCALL_NAME(clock_nanosleep_time64)
#endif
};

const char *lagscope__syscall_name(int32_t nr) {
  for (size_t i = 0; i < sizeof(syscall_names) / sizeof(syscall_names[0]); i++)
    if (syscall_names[i].nr == nr) return syscall_names[i].name;
  return NULL;
}
