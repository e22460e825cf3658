/* lagscope__app_resumed (what Darwin calls on UIApplicationWillEnterForeground) through the
 * running library, which has the dispatcher resume the viewer: its listening socket dies under
 * it, as iOS kills it during suspension; after the call the same URL with the same token
 * answers again (bounded wait). */
#define _GNU_SOURCE
#include "check.h"
#include "host_loop.h"
#include "http_probe.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int main(void) {
  lagscope_config c = lagscope_config_default();
  c.server_port = 0, c.server_bind = "127.0.0.1";
  c.usage_interval_ms = 100; /* the dispatcher wakes with each tick */
  CHECK_EQ_INT(lagscope_start(&c), 0);
  char url[256], path[200];
  CHECK_EQ_INT(lagscope_viewer_url(url, sizeof(url)), 0);
  unsigned port = 0;
  CHECK(sscanf(url, "http://127.0.0.1:%u/", &port) == 1);
  snprintf(path, sizeof(path), "/api/v1/status?%s", strstr(url, "token="));
  CHECK_EQ_INT(test_http_status((uint16_t)port, path), 200);

  int fd = test_listening_fd((uint16_t)port);
  CHECK(fd >= 0);
  CHECK_EQ_INT(shutdown(fd, SHUT_RDWR), 0);
  CHECK_EQ_INT(test_http_status((uint16_t)port, path), -1);

  lagscope__app_resumed();
  uint64_t deadline = test_now_ns() + 10ull * 1000 * 1000 * 1000;
  struct timespec pause = {0, 20 * 1000 * 1000};
  int status = -1;
  while ((status = test_http_status((uint16_t)port, path)) != 200 && test_now_ns() < deadline)
    nanosleep(&pause, NULL);
  CHECK_EQ_INT(status, 200);
  char again[256];
  CHECK_EQ_INT(lagscope_viewer_url(again, sizeof(again)), 0);
  CHECK(strcmp(again, url) == 0);
  CHECK_EQ_INT(lagscope_stop(), 0);
  printf("viewer_restart: the viewer answers again at %s after its listener died\n", url);
  return 0;
}
