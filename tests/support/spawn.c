/* See spawn.h. */
#define _GNU_SOURCE /* pipe2 */

#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t spawn_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void spawn_sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* In the child, between fork and exec: wire stdout and stderr, die with the parent. */
static void spawn_child(const char *path, char *const argv[], int out_fd, int err_fd,
                        pid_t parent) {
  if (dup2(out_fd, STDOUT_FILENO) < 0) _exit(127);
  if (err_fd >= 0 && dup2(err_fd, STDERR_FILENO) < 0) _exit(127);
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* a test that aborts leaves no demo behind */
  if (getppid() != parent) _exit(127);
  execv(path, argv);
  _exit(127);
}

int spawn_start(spawn_proc *p, const char *path, char *const argv[], int stderr_mode) {
  memset(p, 0, sizeof *p);
  p->pid = -1;
  p->out_fd = -1;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  if (stderr_mode == SPAWN_CAPTURE_STDERR) p->err_file = tmpfile();
  fflush(NULL); /* nothing buffered may be written twice */
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) spawn_child(path, argv, fds[1], p->err_file ? fileno(p->err_file) : -1, parent);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return -1;
  }
  p->pid = pid;
  p->out_fd = fds[0];
  return 0;
}

/* Moves one complete line from p->buf to buf. 1 if there was one. */
static int spawn_take_line(spawn_proc *p, char *buf, size_t size, int *too_long) {
  char *nl = memchr(p->buf, '\n', p->len);
  size_t line_len = nl ? (size_t)(nl - p->buf) : p->len;
  if (!nl && !(p->eof && p->len > 0)) return 0;
  *too_long = line_len + 1 > size;
  if (!*too_long) {
    memcpy(buf, p->buf, line_len);
    buf[line_len] = '\0';
  }
  size_t used = nl ? line_len + 1 : line_len;
  memmove(p->buf, p->buf + used, p->len - used);
  p->len -= used;
  return 1;
}

/* Reads what the pipe has into p->buf, waiting until the monotonic deadline. 0 or SPAWN_TIMEOUT. */
static int spawn_fill(spawn_proc *p, uint64_t deadline_ns) {
  uint64_t now = spawn_now_ns();
  if (now >= deadline_ns) return SPAWN_TIMEOUT;
  struct pollfd pfd = {.fd = p->out_fd, .events = POLLIN};
  int ms = (int)((deadline_ns - now + 999999) / 1000000);
  int n = poll(&pfd, 1, ms);
  if (n < 0 && errno == EINTR) return 0;
  if (n <= 0) return n == 0 ? SPAWN_TIMEOUT : 0;
  ssize_t got = read(p->out_fd, p->buf + p->len, sizeof p->buf - p->len);
  if (got > 0) p->len += (size_t)got;
  else if (got == 0 || errno != EINTR) p->eof = 1;
  return 0;
}

int spawn_read_line(spawn_proc *p, char *buf, size_t size, int timeout_ms) {
  uint64_t deadline = spawn_now_ns() + (uint64_t)timeout_ms * 1000000u;
  for (;;) {
    int too_long = 0;
    if (spawn_take_line(p, buf, size, &too_long)) return too_long ? SPAWN_TOO_LONG : SPAWN_LINE;
    if (p->eof) return SPAWN_EOF;
    if (p->len == sizeof p->buf) return SPAWN_TOO_LONG; /* no newline in a full buffer */
    if (spawn_fill(p, deadline) == SPAWN_TIMEOUT) return SPAWN_TIMEOUT;
  }
}

cJSON *spawn_read_json(spawn_proc *p, int timeout_ms, int *result, char *line, size_t line_size) {
  static char scratch[SPAWN_BUFFER];
  char *buf = line ? line : scratch;
  size_t size = line ? line_size : sizeof scratch;
  *result = spawn_read_line(p, buf, size, timeout_ms);
  if (*result != SPAWN_LINE) return NULL;
  cJSON *json = cJSON_Parse(buf);
  if (json && !cJSON_IsObject(json)) {
    cJSON_Delete(json);
    json = NULL;
  }
  return json;
}

const char *spawn_json_type(const cJSON *object) {
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(object, "type");
  return cJSON_IsString(type) ? type->valuestring : NULL;
}

double spawn_json_number(const cJSON *object, const char *name, double fallback) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);
  return cJSON_IsNumber(item) ? item->valuedouble : fallback;
}

int spawn_signal(spawn_proc *p, int sig) {
  if (p->pid <= 0 || p->exited) return -1;
  return kill(p->pid, sig);
}

static int spawn_exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

int spawn_wait(spawn_proc *p, int timeout_ms) {
  if (p->exited) return spawn_exit_code(p->status);
  uint64_t deadline = spawn_now_ns() + (uint64_t)timeout_ms * 1000000u;
  for (;;) {
    pid_t r = waitpid(p->pid, &p->status, WNOHANG);
    if (r == p->pid) break;
    if (r < 0 && errno != EINTR) return -1;
    if (spawn_now_ns() >= deadline) {
      kill(p->pid, SIGKILL);
      waitpid(p->pid, &p->status, 0);
      p->exited = 1;
      return SPAWN_TIMEOUT;
    }
    spawn_sleep_ms(10);
  }
  p->exited = 1;
  return spawn_exit_code(p->status);
}

void spawn_stderr(spawn_proc *p, char *buf, size_t size) {
  buf[0] = '\0';
  if (!p->err_file || size == 0) return;
  rewind(p->err_file);
  size_t n = fread(buf, 1, size - 1, p->err_file);
  buf[n] = '\0';
}

void spawn_close(spawn_proc *p) {
  if (p->pid > 0 && !p->exited) {
    kill(p->pid, SIGKILL);
    waitpid(p->pid, &p->status, 0);
    p->exited = 1;
  }
  if (p->out_fd >= 0) close(p->out_fd);
  p->out_fd = -1;
  if (p->err_file) fclose(p->err_file);
  p->err_file = NULL;
}
