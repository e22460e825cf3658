/* The viewer from the outside, for tests: one request's status, and the listening socket of a
 * port as iOS would find and kill it. Linux (/proc/self/fd). */
#ifndef LAGSCOPE_TEST_HTTP_PROBE_H
#define LAGSCOPE_TEST_HTTP_PROBE_H

#include <stdint.h>

/* GET path from 127.0.0.1:port ("Connection: close", 5 s to answer): the status code, or -1
 * when no connection was made or nothing came back. */
int test_http_status(uint16_t port, const char *path);
/* The listening IPv4 socket on port in this process, or -1 if none. */
int test_listening_fd(uint16_t port);

#endif
