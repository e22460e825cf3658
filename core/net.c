/* The network's portable half: what one socket is, asked through POSIX calls only. The ports
 * (core/linux/net.c, core/darwin/net.c) each find the process's sockets their own way. */
#define _DEFAULT_SOURCE /* the socket calls, with -std=c11 */
#include "internal.h"

#include <netinet/in.h>
#include <sys/socket.h>

int lagscope__net_is_listening_on(int fd, uint32_t address, uint16_t port) {
  int listening = 0;
  socklen_t n = sizeof(listening);
  struct sockaddr_in a;
  socklen_t a_n = sizeof(a);
  return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &n) == 0 && listening &&
         getsockname(fd, (struct sockaddr *)&a, &a_n) == 0 && a.sin_family == AF_INET &&
         a.sin_port == port && a.sin_addr.s_addr == address;
}
