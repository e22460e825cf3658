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
  ssize_t n = lagscope__linux_read_small_file(path, text, size);
  if (n >= 0) return LAGSCOPE_OK;
  return n == -ENOENT || n == -ESRCH ? LAGSCOPE_ENOENT : LAGSCOPE_ESYS;
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
  uint64_t figures[3]; /* on the CPU (ns), waiting to run (ns), times run */
  if (lagscope__parse_u64s(text, strlen(text), figures, 3) != LAGSCOPE_OK) return LAGSCOPE_ESYS;
  *count = figures[2];
  return LAGSCOPE_OK;
}

int lagscope__linux_parse_sigblk(const char *text, uint64_t *mask) {
  const char *line = strstr(text, "\nSigBlk:");
  if (line == NULL) return -1;
  const char *p = line + strlen("\nSigBlk:");
  while (*p == ' ' || *p == '\t') p++;
  uint64_t value = 0;
  int digits = 0;
  for (; digits < 16; digits++, p++) {
    int v = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
    if (v < 0) break;
    value = value << 4 | (uint64_t)v;
  }
  if (digits == 0 || (*p != '\n' && *p != '\0')) return -1;
  *mask = value;
  return 0;
}

/* The status file holds ~1.5 KiB (its Cpus_allowed lines grow with the machine's CPUs). */
#define STATUS_FILE_MAX 4096

int lagscope__linux_signal_mask(int32_t tid, uint64_t *mask) {
  char text[STATUS_FILE_MAX];
  if (read_task_file(tid, "status", text, sizeof(text)) != LAGSCOPE_OK) return -1;
  return lagscope__linux_parse_sigblk(text, mask);
}

/* The kernel's ABI (include/linux/posix-timers.h, make_thread_cpuclock(tid, CPUCLOCK_SCHED)):
 * the tid's complement shifted by 3, "per thread" 4, "scheduler time" 2. */
#define CPUCLOCK_PERTHREAD 4
#define CPUCLOCK_SCHED 2
clockid_t lagscope__linux_thread_cpu_clock(int32_t tid) {
  return (clockid_t)((~(uint32_t)tid << 3) | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED);
}

int lagscope__linux_same_blocked_state(const lagscope__linux_thread_state *a,
                                       const lagscope__linux_thread_state *b) {
  return !a->running && !b->running && a->nr == b->nr && a->sp == b->sp && a->pc == b->pc &&
         memcmp(a->args, b->args, sizeof(a->args)) == 0;
}

/* ---- names ---- */

/* The calls a thread waits in, and the common ones around them, with what they wait for and
 * which argument is their file descriptor; the report names others "syscall_<nr>". Some exist
 * on x86_64 only (aarch64 has just the p-, 4- and at- forms). */
#define SLEEP LAGSCOPE__SYSCALL_SLEEP
#define IO LAGSCOPE__SYSCALL_IO
#define POLL LAGSCOPE__SYSCALL_POLL
#define FUTEX LAGSCOPE__SYSCALL_FUTEX
#define WAIT LAGSCOPE__SYSCALL_WAIT
#define OTHER LAGSCOPE__SYSCALL_OTHER
#define CALL(name, class, fd_arg) {SYS_##name, #name, class, fd_arg, -1, -1},
/* A call on a path: which argument is the path, and which the folder a relative one is in
 * (-1: the working folder). */
#define PATH_CALL(name, dirfd_arg, path_arg) {SYS_##name, #name, IO, -1, dirfd_arg, path_arg},
static const struct {
  long nr;
  const char *name;
  lagscope__syscall_class class;
  int fd_arg;
  int dirfd_arg, path_arg;
} syscalls[] = {
    CALL(read, IO, 0) CALL(write, IO, 0) CALL(readv, IO, 0) CALL(writev, IO, 0)
    CALL(pread64, IO, 0) CALL(pwrite64, IO, 0) CALL(preadv, IO, 0) CALL(pwritev, IO, 0)
    PATH_CALL(openat, 0, 1) CALL(close, IO, 0) CALL(ioctl, IO, 0) CALL(fcntl, IO, 0)
    CALL(fsync, IO, 0) CALL(fdatasync, IO, 0) CALL(sync_file_range, IO, 0) CALL(flock, IO, 0)
    CALL(ppoll, POLL, -1) CALL(pselect6, POLL, -1) CALL(epoll_pwait, POLL, 0)
    CALL(nanosleep, SLEEP, -1) CALL(clock_nanosleep, SLEEP, -1) CALL(futex, FUTEX, -1)
    CALL(wait4, WAIT, -1) CALL(waitid, WAIT, -1) CALL(connect, IO, 0) CALL(accept, IO, 0)
    CALL(accept4, IO, 0) CALL(recvfrom, IO, 0) CALL(sendto, IO, 0) CALL(recvmsg, IO, 0)
    CALL(sendmsg, IO, 0) CALL(recvmmsg, IO, 0) CALL(sendmmsg, IO, 0) CALL(msgrcv, WAIT, -1)
    CALL(msgsnd, WAIT, -1) CALL(semtimedop, WAIT, -1) CALL(rt_sigtimedwait, WAIT, -1)
    CALL(rt_sigsuspend, WAIT, -1) CALL(mmap, OTHER, -1) CALL(munmap, OTHER, -1)
    CALL(mprotect, OTHER, -1) CALL(madvise, OTHER, -1) CALL(brk, OTHER, -1)
    CALL(clone, OTHER, -1) CALL(execve, OTHER, -1) CALL(exit, OTHER, -1)
    CALL(exit_group, OTHER, -1) CALL(getdents64, IO, 0) PATH_CALL(newfstatat, 0, 1)
    PATH_CALL(statx, 0, 1) CALL(io_getevents, IO, -1) CALL(io_uring_enter, IO, 0)
    CALL(sched_yield, OTHER, -1) CALL(splice, IO, 0) CALL(sendfile, IO, 1)
    CALL(copy_file_range, IO, 0) CALL(fallocate, IO, 0) CALL(ftruncate, IO, 0)
    PATH_CALL(renameat, 0, 1) PATH_CALL(unlinkat, 0, 1) PATH_CALL(mkdirat, 0, 1)
    CALL(getrandom, OTHER, -1) CALL(membarrier, OTHER, -1) CALL(process_vm_readv, OTHER, -1)
    PATH_CALL(faccessat, 0, 1) PATH_CALL(readlinkat, 0, 1) PATH_CALL(truncate, -1, 0)
    PATH_CALL(chdir, -1, 0) PATH_CALL(statfs, -1, 0) PATH_CALL(mknodat, 0, 1)
#ifdef SYS_poll
    CALL(poll, POLL, -1) CALL(select, POLL, -1) CALL(epoll_wait, POLL, 0) CALL(pause, WAIT, -1)
    PATH_CALL(open, -1, 0) CALL(fork, OTHER, -1) CALL(vfork, WAIT, -1) PATH_CALL(stat, -1, 0)
    CALL(fstat, IO, 0) PATH_CALL(lstat, -1, 0) PATH_CALL(rename, -1, 0) PATH_CALL(unlink, -1, 0)
    PATH_CALL(mkdir, -1, 0) PATH_CALL(access, -1, 0) PATH_CALL(readlink, -1, 0)
#endif
#ifdef SYS_faccessat2
    PATH_CALL(faccessat2, 0, 1)
#endif
#ifdef SYS_openat2
    PATH_CALL(openat2, 0, 1)
#endif
#ifdef SYS_epoll_pwait2
    CALL(epoll_pwait2, POLL, 0)
#endif
#ifdef SYS_futex_waitv
    CALL(futex_waitv, FUTEX, -1)
#endif
};

static int find_syscall(int32_t nr) {
  for (size_t i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++)
    if (syscalls[i].nr == nr) return (int)i;
  return -1;
}

const char *lagscope__syscall_name(int32_t nr) {
  int i = find_syscall(nr);
  return i >= 0 ? syscalls[i].name : NULL;
}

int lagscope__linux_syscall_path_arg(int32_t nr, int *dirfd_arg) {
  int i = find_syscall(nr);
  *dirfd_arg = i >= 0 ? syscalls[i].dirfd_arg : -1;
  return i >= 0 ? syscalls[i].path_arg : -1;
}

int lagscope__syscall_target_arg(int32_t nr) {
  int i = find_syscall(nr);
  if (i < 0) return -1;
  return syscalls[i].fd_arg >= 0 ? syscalls[i].fd_arg : syscalls[i].path_arg;
}

lagscope__syscall_class lagscope__syscall_classify(int32_t nr, int *fd_arg) {
  int i = find_syscall(nr);
  *fd_arg = i >= 0 ? syscalls[i].fd_arg : -1;
  return i >= 0 ? syscalls[i].class : LAGSCOPE__SYSCALL_OTHER;
}
