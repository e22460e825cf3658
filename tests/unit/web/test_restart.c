/* The viewer's listener restarts (lagscope__web_restart): iOS closes a suspended app's listening
 * sockets and civetweb never reopens one. Here the listening socket is shut down under the
 * running server: connections are then refused; after the restart the same URL (same port)
 * with the same token answers again, and a wrong token still gets nothing. */
#define _GNU_SOURCE
#include "check.h"
#include "internal.h"
#include "web.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static int capture_none(char **json, uint64_t timeout_ns) {
  (void)json, (void)timeout_ns;
  return LAGSCOPE_ENOENT;
}

/* GET path from 127.0.0.1:port: the status code, or -1 when no connection was made. */
static int http_get(uint16_t port, const char *path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  struct timeval limit = {5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  if (connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0) {
    close(fd);
    return -1;
  }
  char request[512], reply[64] = "";
  snprintf(request, sizeof(request), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
           path);
  int status = -1;
  if (write(fd, request, strlen(request)) == (ssize_t)strlen(request) &&
      read(fd, reply, sizeof(reply) - 1) > 12)
    status = atoi(reply + 9); /* "HTTP/1.1 200" */
  close(fd);
  return status;
}

/* The listening socket on port in this process, found as iOS would close it: -1 if none. */
static int listening_fd(uint16_t port) {
  DIR *d = opendir("/proc/self/fd");
  int found = -1;
  for (struct dirent *e; d != NULL && found < 0 && (e = readdir(d)) != NULL;) {
    int fd = atoi(e->d_name), listening = 0;
    struct sockaddr_in a;
    socklen_t len = sizeof(a), optlen = sizeof(listening);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &optlen) == 0 && listening &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0 && a.sin_family == AF_INET &&
        ntohs(a.sin_port) == port)
      found = fd;
  }
  if (d != NULL) closedir(d);
  return found;
}

int main(void) {
  char dir[] = "/tmp/lagscope-restart.XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  lagscope_config config = lagscope_config_default();
  config.server_port = 0;
  config.server_bind = "127.0.0.1";
  lagscope__web_host host = {&config, dir, "restart-test", capture_none};
  lagscope__web *web = NULL;
  char why[256] = "";
  CHECK_MSG(lagscope__web_start(&host, &web, why, sizeof(why)) == 0, "%s", why);
  char url[160], path[160];
  snprintf(url, sizeof(url), "%s", lagscope__web_url(web));
  uint16_t port = lagscope__web_port(web);
  const char *token = strstr(url, "token=");
  CHECK(token != NULL);
  snprintf(path, sizeof(path), "/api/v1/status?%s", token);
  CHECK_EQ_INT(http_get(port, path), 200);

  /* The socket dies under the server, as iOS kills it during suspension. */
  int fd = listening_fd(port);
  CHECK(fd >= 0);
  CHECK_EQ_INT(shutdown(fd, SHUT_RDWR), 0);
  CHECK_EQ_INT(http_get(port, path), -1);

  CHECK_MSG(lagscope__web_restart(web, why, sizeof(why)) == 0, "%s", why);
  CHECK(strcmp(lagscope__web_url(web), url) == 0);
  CHECK_EQ_INT(lagscope__web_port(web), port);
  CHECK_EQ_INT(http_get(port, path), 200);
  CHECK_EQ_INT(http_get(port, "/api/v1/status?token=0000"), 401);

  /* A second restart, and a stop after it, leave nothing behind. */
  CHECK_MSG(lagscope__web_restart(web, why, sizeof(why)) == 0, "%s", why);
  CHECK_EQ_INT(http_get(port, path), 200);
  lagscope__web_stop(web);
  CHECK_EQ_INT(http_get(port, path), -1);
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
  printf("web_restart: the same URL answers after the listener died and was restarted\n");
  return 0;
}
