/*
 * The viewer's token: 128 random bits per launch, as 32 lowercase hex digits. It is saved in
 * the report folder (mode 0600, written to a temporary file and renamed) so that the next
 * launch can accept it once more and hand the browser its own by a cookie: a viewer that was
 * open reconnects by itself when the app restarts. Only the previous launch's is accepted.
 */
#define _GNU_SOURCE
#include "http.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TOKEN_FILE "viewer-token"

static void to_hex(const unsigned char *bytes, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  out[2 * n] = '\0';
}

static int is_token(const char *text) {
  if (strlen(text) != LAGSCOPE__TOKEN_HEX) return 0;
  for (const char *p = text; *p != '\0'; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return 0;
  return 1;
}

/* The previous launch's token, if the file holds exactly one (and a newline at most). */
static void read_previous(const char *path, char previous[LAGSCOPE__TOKEN_HEX + 1]) {
  previous[0] = '\0';
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return;
  char text[LAGSCOPE__TOKEN_HEX + 4];
  ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  if (n <= 0) return;
  text[n] = '\0';
  text[strcspn(text, "\n")] = '\0';
  if (is_token(text)) memcpy(previous, text, LAGSCOPE__TOKEN_HEX + 1);
}

static int save(const char *dir, const char *path, const char *token, char *why, size_t why_size) {
  char temp[600];
  snprintf(temp, sizeof(temp), "%s/." TOKEN_FILE ".%d.tmp", dir, (int)lagscope__process_id());
  int fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    lagscope__explain(why, why_size, "cannot save the viewer token in %s: %s", dir, strerror(errno));
    return LAGSCOPE_ESYS;
  }
  char line[LAGSCOPE__TOKEN_HEX + 2];
  snprintf(line, sizeof(line), "%s\n", token);
  ssize_t n = write(fd, line, strlen(line));
  int failed = n != (ssize_t)strlen(line) || close(fd) != 0;
  if (failed || rename(temp, path) != 0) {
    lagscope__explain(why, why_size, "cannot save the viewer token in %s: %s", dir, strerror(errno));
    unlink(temp);
    return LAGSCOPE_ESYS;
  }
  return LAGSCOPE_OK;
}

int lagscope__token_make(const char *dir, char current[LAGSCOPE__TOKEN_HEX + 1],
                         char previous[LAGSCOPE__TOKEN_HEX + 1], char *why, size_t why_size) {
  unsigned char bytes[LAGSCOPE__TOKEN_HEX / 2];
  if (lagscope__random_bytes(bytes, sizeof(bytes)) != LAGSCOPE_OK) {
    lagscope__explain(why, why_size, "the OS gave no random bytes for the viewer's token");
    return LAGSCOPE_ESYS;
  }
  to_hex(bytes, sizeof(bytes), current);
  char path[600];
  snprintf(path, sizeof(path), "%s/" TOKEN_FILE, dir);
  read_previous(path, previous);
  /* Without the file the token still works for this launch: only the roll-over is lost. */
  char failure[256];
  if (lagscope__make_dirs(dir, failure, sizeof(failure)) != LAGSCOPE_OK ||
      save(dir, path, current, failure, sizeof(failure)) != LAGSCOPE_OK)
    lagscope__log("%s: an open viewer will need the new URL after a restart", failure);
  return LAGSCOPE_OK;
}
