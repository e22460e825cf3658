/*
 * The network, as the viewer needs it, on iOS and macOS: en0 is the interface to prefer (Wi-Fi
 * on an iPhone, the first Ethernet or Wi-Fi on a Mac). No bound per client address (Darwin has
 * no /proc to find the process's sockets by, and no TCP_INFO states), and no deferred accept
 * (TCP_DEFER_ACCEPT is Linux's; Darwin's accept filters are not available to apps).
 */
#include "../internal.h"

#include <stdio.h>

void lagscope__net_preferred_interface(char *out, size_t size) { snprintf(out, size, "en0"); }

int lagscope__net_peer_socket(int fd, uint16_t port, lagscope__peer_socket *out) {
  (void)fd, (void)port, (void)out;
  return 0;
}

size_t lagscope__net_peer_sockets(uint16_t port, lagscope__peer_socket *out, size_t max) {
  (void)port, (void)out, (void)max;
  return 0;
}

void lagscope__net_defer_accept(uint16_t port, int seconds) { (void)port, (void)seconds; }
