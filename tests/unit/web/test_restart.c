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
#include <unistd.h>

static int capture_none(char **json, uint64_t timeout_ns) {
  (void)json, (void)timeout_ns;
  return LAGSCOPE_ENOENT;
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
  lagscope__web_stop(web);
  CHECK_EQ_INT(test_http_status(port, path), -1);
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
  printf("web_restart: the same URL answers after the listener died and was restarted\n");
  return 0;
}
