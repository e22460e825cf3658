/*
 * The network, as the viewer needs it from the OS: the interface of the default route, the
 * live connections accepted on the viewer's port (for its bound per client address), civetweb's
 * listening socket (given the viewer's in its place), and the kernel holding silent
 * connections back. civetweb hands out no socket, so the process's own are looked at through
 * /proc/thread-self/fd: the calling thread's table, which for the viewer's threads is their own.
 */
#define _GNU_SOURCE
#include "../internal.h"
#include "linux.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* /proc/net/route: "Iface Destination Gateway Flags RefCnt Use Metric ...", hex fields; the
 * default route has destination 0; the lowest metric wins, as the kernel's choice does. */
void lagscope__net_preferred_interface(char *out, size_t size) {
  out[0] = '\0';
  FILE *f = fopen("/proc/net/route", "re");
  if (f == NULL) return;
  char line[256], name[IF_NAMESIZE];
  long best = -1;
  if (fgets(line, sizeof(line), f) != NULL) { /* the header */
    while (fgets(line, sizeof(line), f) != NULL) {
      unsigned long destination, gateway;
      unsigned flags;
      long metric;
      if (sscanf(line, "%15s %lx %lx %x %*d %*d %ld", name, &destination, &gateway, &flags,
                 &metric) != 5)
        continue;
      if (destination != 0 || (flags & 1u) == 0 || (best >= 0 && metric >= best)) continue;
      best = metric; /* flag 1: RTF_UP */
      snprintf(out, size, "%s", name);
    }
  }
  fclose(f);
}

int lagscope__net_peer_socket(int fd, uint16_t port, lagscope__peer_socket *out) {
  struct sockaddr_storage a;
  socklen_t n = sizeof(a);
  if (getsockname(fd, (struct sockaddr *)&a, &n) != 0 || a.ss_family != AF_INET ||
      ntohs(((struct sockaddr_in *)&a)->sin_port) != port)
    return 0;
  struct tcp_info info;
  socklen_t info_n = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &info_n) != 0 ||
      (info.tcpi_state != TCP_ESTABLISHED && info.tcpi_state != TCP_CLOSE_WAIT))
    return 0; /* the listening socket, or one already shut down */
  n = sizeof(a);
  if (getpeername(fd, (struct sockaddr *)&a, &n) != 0 || a.ss_family != AF_INET) return 0;
  out->fd = fd;
  memcpy(out->address, &((struct sockaddr_in *)&a)->sin_addr, sizeof(out->address));
  return 1;
}

/* Calls visit for each of the process's open fds (but the listing's own) until it returns 0.
 * civetweb hands out no socket: this is how the viewer's are found. */
typedef struct fd_visit {
  int (*visit)(int fd, void *ctx);
  void *ctx;
} fd_visit;

static int note_fd(const char *name, int dir_fd, void *ctx) {
  const fd_visit *v = ctx;
  if (name[0] < '0' || name[0] > '9') return 1;
  int fd = atoi(name);
  return fd == dir_fd || v->visit(fd, v->ctx);
}

static void each_own_fd(int (*visit)(int fd, void *ctx), void *ctx) {
  fd_visit v = {visit, ctx};
  /* The calling thread's table (the viewer's threads have one of their own: thread.c). */
  lagscope__linux_each_name("/proc/thread-self/fd", note_fd, &v);
}

typedef struct peer_search {
  uint16_t port;
  lagscope__peer_socket *out;
  size_t max, found;
} peer_search;

static int note_peer(int fd, void *ctx) {
  peer_search *p = ctx;
  if (lagscope__net_peer_socket(fd, p->port, &p->out[p->found])) p->found++;
  return p->found < p->max;
}

size_t lagscope__net_peer_sockets(uint16_t port, lagscope__peer_socket *out, size_t max) {
  peer_search search = {port, out, max, 0};
  if (max > 0) each_own_fd(note_peer, &search);
  return search.found;
}

typedef struct listener_search {
  uint32_t address;
  uint16_t port;
  int fd;
} listener_search;

static int note_listener(int fd, void *ctx) {
  listener_search *l = ctx;
  if (lagscope__net_is_listening_on(fd, l->address, l->port)) l->fd = fd;
  return l->fd < 0;
}

int lagscope__net_listening_fd(uint32_t address, uint16_t port) {
  listener_search search = {address, port, -1};
  each_own_fd(note_listener, &search);
  return search.fd;
}

void lagscope__net_defer_accept(int fd, int seconds) {
  setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &seconds, sizeof(seconds));
}

int lagscope__net_dup_onto(int from, int onto) {
  return dup3(from, onto, O_CLOEXEC) == onto ? 0 : -1;
}
