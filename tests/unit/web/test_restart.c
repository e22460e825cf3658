/* The viewer's listener restarts (lagscope__web_restart): iOS closes a suspended app's listening
 * sockets and civetweb never reopens one. Here the listening socket is shut down under the
 * running server: connections are then refused; after the restart the same URL (same port)
 * with the same token answers again, and a wrong token still gets nothing. */
#define _GNU_SOURCE
#include "check.h"
#include "http_probe.h"
#include "internal.h"
#include "web.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

static int capture_none(char **json, uint64_t timeout_ns) {
  (void)json, (void)timeout_ns;
  return LAGSCOPE_ENOENT;
}

/* Another process's listener on 127.0.0.1:port. */
static int listen_on_loopback(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  int on = 1; /* as a server does; the viewer's dead socket still holds the port, closed */
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 4) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
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
  CHECK_EQ_INT(test_http_status(port, path), 200);

  /* The socket dies under the server, as iOS kills it during suspension. */
  int fd = test_listening_fd(port);
  CHECK(fd >= 0);
  CHECK_EQ_INT(shutdown(fd, SHUT_RDWR), 0);
  CHECK_EQ_INT(test_http_status(port, path), -1);

  CHECK_MSG(lagscope__web_restart(web, why, sizeof(why)) == 0, "%s", why);
  CHECK(strcmp(lagscope__web_url(web), url) == 0);
  CHECK_EQ_INT(lagscope__web_port(web), port);
  CHECK_EQ_INT(test_http_status(port, path), 200);
  CHECK_EQ_INT(test_http_status(port, "/api/v1/status?token=0000"), 401);

  /* A second restart, and a stop after it, leave nothing behind. */
  CHECK_MSG(lagscope__web_restart(web, why, sizeof(why)) == 0, "%s", why);
  CHECK_EQ_INT(test_http_status(port, path), 200);

  /* Issue 33, risk 5: another process takes the port while the app sleeps. The restart moves
   * to a free port above it and the URL says the new port (consumer.c publishes it again). */
  fd = test_listening_fd(port);
  CHECK(fd >= 0);
  CHECK_EQ_INT(shutdown(fd, SHUT_RDWR), 0);
  int squatter = listen_on_loopback(port);
  CHECK_MSG(squatter >= 0, "cannot take port %u", (unsigned)port);
  CHECK_MSG(lagscope__web_restart(web, why, sizeof(why)) == 0, "%s", why);
  uint16_t moved = lagscope__web_port(web);
  CHECK(moved != port && moved > port && moved < port + 10);
  char want[32];
  snprintf(want, sizeof(want), ":%u/?token=", (unsigned)moved);
  CHECK_MSG(strstr(lagscope__web_url(web), want) != NULL, "%s has not port %u",
            lagscope__web_url(web), (unsigned)moved);
  CHECK(strcmp(strstr(lagscope__web_url(web), "token="), token) == 0); /* the same token */
  CHECK_EQ_INT(test_http_status(moved, path), 200);
  close(squatter);
  lagscope__web_stop(web);
  CHECK_EQ_INT(test_http_status(port, path), -1);
  CHECK_EQ_INT(test_http_status(moved, path), -1);
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
  printf("web_restart: the same URL answers after the listener died and was restarted\n");
  return 0;
}
