/* The viewer from the outside, for tests: one request's status, and the listening socket of a
 * port, to kill it as iOS would. */
#ifndef LAGSCOPE_TEST_HTTP_PROBE_H
#define LAGSCOPE_TEST_HTTP_PROBE_H

#include <stdint.h>

/* GET path from 127.0.0.1:port ("Connection: close", 5 s to answer): the status code, or -1
 * when no connection was made or nothing came back. */
int test_http_status(uint16_t port, const char *path);
/* The process's socket listening on 127.0.0.1:port, or -1 if none. */
int test_listening_fd(uint16_t port);

#endif
