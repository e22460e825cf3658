/* What a blocked system call waits on, named as a person reads it: a file's path (the fd's,
 * or the path a call such as openat or stat is given, read from the caller's memory),
 * "pipe:[8812]", a socket with its peer ("tcp 127.0.0.1:41234 -> 127.0.0.1:5432", found by the
 * socket's inode in /proc/net/{tcp,tcp6,udp,udp6,unix}), or the fds a poll, select or epoll
 * waits on. On the monitor thread, from /proc and from the caller's own arrays (read with a
 * checked read: they are in our memory, but a bad pointer must not fault). No allocation. */
#define _GNU_SOURCE
#include "../internal.h"
#include "linux.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#define FDS_NAMED_MAX 4 /* a poll over more fds names the first few */
#define LINE_MAX_LEN 512

/* ---- sockets: the peer from /proc/net, by inode ---- */

/* "0100007F:A0F2" (IPv4) or 32 hex digits and a port (IPv6), as the kernel prints them: each
 * 32-bit word in host order. */
static int format_address(const char *hex, char *out, size_t size) {
  const char *colon = strchr(hex, ':');
  if (colon == NULL) return -1;
  size_t digits = (size_t)(colon - hex);
  unsigned port = (unsigned)strtoul(colon + 1, NULL, 16);
  unsigned char bytes[16];
  if (digits != 8 && digits != 32) return -1;
  for (size_t w = 0; w < digits / 8; w++) {
    char word[9];
    memcpy(word, hex + w * 8, 8);
    word[8] = '\0';
    uint32_t v = (uint32_t)strtoul(word, NULL, 16);
    memcpy(bytes + w * 4, &v, 4);
  }
  char ip[INET6_ADDRSTRLEN];
  if (inet_ntop(digits == 8 ? AF_INET : AF_INET6, bytes, ip, sizeof(ip)) == NULL) return -1;
  snprintf(out, size, digits == 8 ? "%s:%u" : "[%s]:%u", ip, port);
  return 0;
}

typedef int (*line_fn)(const char *line, void *ctx); /* 1: found, stop */

/* Calls fn on each line of a /proc file, read in pieces (it can be large: 1 000 sockets). */
static int each_line(const char *path, line_fn fn, void *ctx) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[8192], line[LINE_MAX_LEN];
  size_t line_len = 0;
  int found = 0;
  for (ssize_t n; !found && (n = read(fd, buf, sizeof(buf))) > 0;) {
    for (ssize_t i = 0; i < n && !found; i++) {
      if (buf[i] != '\n') {
        if (line_len < sizeof(line) - 1) line[line_len++] = buf[i];
        continue;
      }
      line[line_len] = '\0';
      found = fn(line, ctx);
      line_len = 0;
    }
  }
  close(fd);
  return found;
}

typedef struct peer_search {
  unsigned long inode;
  const char *protocol;
  char *out;
  size_t size;
} peer_search;

static int inet_line(const char *line, void *ctx) {
  peer_search *p = ctx;
  char local[64], remote[64];
  unsigned long inode;
  /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
  if (sscanf(line, " %*s %63s %63s %*s %*s %*s %*s %*s %*s %lu", local, remote, &inode) != 3 ||
      inode != p->inode)
    return 0;
  char a[80], b[80];
  if (format_address(local, a, sizeof(a)) != 0 || format_address(remote, b, sizeof(b)) != 0)
    return 0;
  snprintf(p->out, p->size, "%s %s -> %s", p->protocol, a, b);
  return 1;
}

static int unix_line(const char *line, void *ctx) {
  peer_search *p = ctx;
  unsigned long inode;
  int path_at = 0;
  /* Num RefCount Protocol Flags Type St Inode [Path] */
  if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %n", &inode, &path_at) != 1 ||
      inode != p->inode)
    return 0;
  const char *path = line + path_at;
  snprintf(p->out, p->size, "unix %s", path[0] != '\0' ? path : "(unnamed)");
  return 1;
}

static int describe_socket(unsigned long inode, char *out, size_t size) {
  static const struct {
    const char *path, *protocol;
  } tables[] = {{"/proc/net/tcp", "tcp"}, {"/proc/net/tcp6", "tcp6"},
                {"/proc/net/udp", "udp"}, {"/proc/net/udp6", "udp6"}};
  for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
    peer_search p = {inode, tables[i].protocol, out, size};
    if (each_line(tables[i].path, inet_line, &p)) return 1;
  }
  peer_search p = {inode, "unix", out, size};
  return each_line("/proc/net/unix", unix_line, &p);
}

/* ---- one fd ---- */

static void describe_fd(long fd, char *out, size_t size) {
  char path[64], target[256];
  snprintf(path, sizeof(path), "/proc/self/fd/%ld", fd);
  ssize_t n = readlink(path, target, sizeof(target) - 1);
  if (n <= 0) {
    snprintf(out, size, "fd %ld", fd);
    return;
  }
  target[n] = '\0';
  unsigned long inode;
  if (sscanf(target, "socket:[%lu]", &inode) == 1 && describe_socket(inode, out, size)) return;
  snprintf(out, size, "%s", target);
}

static void append(char *out, size_t size, const char *text) {
  size_t len = strlen(out);
  if (len + 1 < size) snprintf(out + len, size - len, "%s%s", len > 0 ? ", " : "", text);
}

/* ---- a path argument ---- */

#define PATH_SHOWN_MAX 256 /* bytes of a path read; a longer one ends in "..." */
#define CHUNK_ALIGN 4096u  /* no read crosses such a boundary: a page is at least that */

/* The string at address in our own memory, read with checked reads that never cross into the
 * next page (a path may end just before an unmapped one); unprintable bytes become '?'. 0,
 * 1 when cut short at size - 1 bytes, -1 when unreadable. */
static int read_own_string(uintptr_t address, char *out, size_t size) {
  size_t len = 0;
  int cut = 1;
  while (len < size - 1) {
    size_t chunk = CHUNK_ALIGN - ((address + len) % CHUNK_ALIGN);
    if (chunk > size - 1 - len) chunk = size - 1 - len;
    if (lagscope__linux_read_own(address + len, out + len, chunk) != 0) return -1;
    const char *end = memchr(out + len, '\0', chunk);
    if (end != NULL) {
      len = (size_t)(end - out);
      cut = 0;
      break;
    }
    len += chunk;
  }
  out[len] = '\0';
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f) out[i] = '?';
  return cut;
}

/* The path a call was given, made absolute by the folder it is relative to (the call's folder
 * fd, or the working folder, as they are now). Nothing when it cannot be read. */
static void describe_path(const lagscope__stack *stack, int dirfd_arg, int path_arg, char *out,
                          size_t size) {
  char path[PATH_SHOWN_MAX];
  int cut = read_own_string(stack->args[path_arg], path, sizeof(path));
  if (cut < 0 || path[0] == '\0') return;
  char base[PATH_SHOWN_MAX] = "";
  if (path[0] != '/') {
    char link[64];
    int dirfd = dirfd_arg >= 0 ? (int)stack->args[dirfd_arg] : AT_FDCWD;
    if (dirfd == AT_FDCWD) snprintf(link, sizeof(link), "/proc/self/cwd");
    else snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
    ssize_t n = readlink(link, base, sizeof(base) - 2);
    if (n <= 0 || base[0] != '/') n = 0;          /* unknown: the path as given */
    else if (base[n - 1] != '/') base[n++] = '/'; /* not the root */
    base[n] = '\0';
  }
  int n = snprintf(out, size, "%s%s", base, path);
  if ((!cut && n >= 0 && (size_t)n < size) || size < 4) return;
  size_t len = strlen(out); /* longer than shown: its end says so */
  if (len + 4 > size) len = size - 4;
  memcpy(out + len, "...", 4);
}

/* ---- the fds of a poll, select or epoll_wait ---- */

static void describe_poll(uintptr_t fds, uintptr_t count, char *out, size_t size) {
  for (uintptr_t i = 0; i < count && i < FDS_NAMED_MAX; i++) {
    struct pollfd p;
    if (lagscope__linux_read_own(fds + i * sizeof(p), &p, sizeof(p)) != 0) return;
    char one[160];
    describe_fd(p.fd, one, sizeof(one));
    append(out, size, one);
  }
}

static void describe_select(uintptr_t count, uintptr_t read_set, char *out, size_t size) {
  fd_set set;
  if (read_set == 0 || count > FD_SETSIZE || lagscope__linux_read_own(read_set, &set, sizeof(set)) != 0)
    return;
  int named = 0;
  for (int fd = 0; fd < (int)count && named < FDS_NAMED_MAX; fd++) {
    if (!FD_ISSET(fd, &set)) continue;
    char one[160];
    describe_fd(fd, one, sizeof(one));
    append(out, size, one);
    named++;
  }
}

typedef struct epoll_search {
  char *out;
  size_t size;
  int named;
} epoll_search;

static int epoll_line(const char *line, void *ctx) { /* "tfd:        5 events: ..." */
  epoll_search *e = ctx;
  long fd;
  if (sscanf(line, "tfd: %ld", &fd) != 1) return 0;
  char one[160];
  describe_fd(fd, one, sizeof(one));
  append(e->out, e->size, one);
  return ++e->named == FDS_NAMED_MAX;
}

static void describe_epoll(long epoll_fd, char *out, size_t size) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fdinfo/%ld", epoll_fd);
  epoll_search e = {out, size, 0};
  each_line(path, epoll_line, &e);
}

void lagscope__describe_wait_target(const lagscope__stack *stack, char *out, size_t size) {
  out[0] = '\0';
  if (stack->run_state != LAGSCOPE__RUN_SYSCALL || stack->syscall < 0) return;
  int fd_arg;
  lagscope__syscall_class class = lagscope__syscall_classify(stack->syscall, &fd_arg);
  const char *name = lagscope__syscall_name(stack->syscall);
  if (class == LAGSCOPE__SYSCALL_POLL) {
    if (fd_arg >= 0) describe_epoll((long)stack->args[0], out, size);
    else if (strcmp(name, "poll") == 0 || strcmp(name, "ppoll") == 0)
      describe_poll(stack->args[0], stack->args[1], out, size);
    else describe_select(stack->args[0], stack->args[1], out, size);
  } else if (fd_arg >= 0) {
    describe_fd((long)(int)stack->args[fd_arg], out, size);
  } else {
    int dirfd_arg, path_arg = lagscope__linux_syscall_path_arg(stack->syscall, &dirfd_arg);
    if (path_arg >= 0) describe_path(stack, dirfd_arg, path_arg, out, size);
  }
}
