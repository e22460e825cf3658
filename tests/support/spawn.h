/*
 * Runs a program (the demo) as a child process for tests: its stdout on a pipe read line by
 * line with a bounded wait, its stderr inherited or captured, signals, and a bounded wait for
 * its exit. Linux only (the child dies with the test through PR_SET_PDEATHSIG).
 */
#ifndef DEMO_SPAWN_H
#define DEMO_SPAWN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#define SPAWN_BUFFER 65536 /* longest stdout line we accept, with room to spare */

typedef struct spawn_proc {
  pid_t pid;
  int out_fd;          /* read end of the child's stdout */
  FILE *err_file;      /* captured stderr (a temporary file), NULL when inherited */
  char buf[SPAWN_BUFFER];
  size_t len;          /* bytes in buf not yet returned */
  int eof;
  int exited;
  int status;          /* waitpid status once exited */
} spawn_proc;

enum { SPAWN_INHERIT_STDERR = 0, SPAWN_CAPTURE_STDERR = 1 };

/* Results of spawn_read_line and spawn_read_json. */
enum { SPAWN_LINE = 1, SPAWN_EOF = 0, SPAWN_TIMEOUT = -1, SPAWN_TOO_LONG = -2 };

/* Starts path with argv (argv[0] first, NULL-terminated). 0 or -1 with errno. */
int spawn_start(spawn_proc *p, const char *path, char *const argv[], int stderr_mode);

/* Reads one line of stdout without its newline into buf, waiting at most timeout_ms.
 * SPAWN_LINE, SPAWN_EOF (stdout closed, nothing left), SPAWN_TIMEOUT or SPAWN_TOO_LONG. */
int spawn_read_line(spawn_proc *p, char *buf, size_t size, int timeout_ms);

/* Reads one line and parses it: a cJSON object to cJSON_Delete, or NULL with *result set to
 * SPAWN_EOF/SPAWN_TIMEOUT/SPAWN_TOO_LONG, or NULL with *result SPAWN_LINE when the line was not
 * JSON (the line is then left in line, if given). */
cJSON *spawn_read_json(spawn_proc *p, int timeout_ms, int *result, char *line, size_t line_size);

/* The string "type" of a JSON object, or NULL. */
const char *spawn_json_type(const cJSON *object);
/* A number field, or fallback when missing or not a number. */
double spawn_json_number(const cJSON *object, const char *name, double fallback);

int spawn_signal(spawn_proc *p, int sig);

/* Waits for exit at most timeout_ms. Returns the exit code, 128 + signal when killed by one, or
 * SPAWN_TIMEOUT after killing the child with SIGKILL. */
int spawn_wait(spawn_proc *p, int timeout_ms);

/* Copies captured stderr (after exit) into buf, NUL-terminated; "" when not captured. */
void spawn_stderr(spawn_proc *p, char *buf, size_t size);

/* Closes what is left; kills the child with SIGKILL if it still runs. */
void spawn_close(spawn_proc *p);

uint64_t spawn_now_ns(void);
void spawn_sleep_ms(int ms);

#endif /* DEMO_SPAWN_H */
