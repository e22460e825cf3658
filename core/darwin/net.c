/*
 * The network, as the viewer needs it, on iOS and macOS: en0 is the interface to prefer (Wi-Fi
 * on an iPhone, the first Ethernet or Wi-Fi on a Mac). No bound per client address (Darwin has
 * no /proc to find the process's sockets by, and no TCP_INFO states), and no deferred accept
 * (TCP_DEFER_ACCEPT is Linux's; Darwin's accept filters are not available to apps). The
 * listening socket of a port is found by asking each fd, once per viewer start.
 */
#include "../internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

void lagscope__net_preferred_interface(char *out, size_t size) { snprintf(out, size, "en0"); }

int lagscope__net_peer_socket(int fd, uint16_t port, lagscope__peer_socket *out) {
  (void)fd, (void)port, (void)out;
  return 0;
}

size_t lagscope__net_peer_sockets(uint16_t port, lagscope__peer_socket *out, size_t max) {
  (void)port, (void)out, (void)max;
  return 0;
}

void lagscope__net_defer_accept(int fd, int seconds) { (void)fd, (void)seconds; }

int lagscope__net_listening_fd(uint32_t address, uint16_t port) {
  int limit = getdtablesize();
  for (int fd = 0; fd < limit && fd < 65536; fd++)
    if (lagscope__net_is_listening_on(fd, address, port)) return fd;
  return -1;
}

/* No dup3 on Darwin: the flag follows at once. */
int lagscope__net_dup_onto(int from, int onto) {
  if (dup2(from, onto) != onto) return -1;
  return fcntl(onto, F_SETFD, FD_CLOEXEC) == 0 ? 0 : -1;
}
