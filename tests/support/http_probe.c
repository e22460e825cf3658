#define _GNU_SOURCE
#include "http_probe.h"
#include "internal.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int test_http_status(uint16_t port, const char *path) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  struct timeval limit = {5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  char request[512], reply[64] = "";
  snprintf(request, sizeof(request),
           "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
  int status = -1;
  if (connect(fd, (struct sockaddr *)&to, sizeof(to)) == 0 &&
      write(fd, request, strlen(request)) == (ssize_t)strlen(request) &&
      read(fd, reply, sizeof(reply) - 1) > 12)
    status = atoi(reply + 9); /* "HTTP/1.1 200" */
  close(fd);
  return status;
}

int test_listening_fd(uint16_t port) {
  return lagscope__net_listening_fd(htonl(INADDR_LOOPBACK), htons(port));
}
