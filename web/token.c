/*
 * The viewer's token: 128 random bits per launch, as 32 lowercase hex digits. It is saved in
 * the report folder (mode 0600, written to a temporary file and renamed) so that the next
 * launch can accept it once more and hand the browser its own by a cookie: a viewer that was
 * open reconnects by itself when the app restarts. Only the previous launch's is accepted.
 * The file is that roll-over's, the latest launch's: two instances of one app share it, so it
 * is no credential for a scraper. A scraper's is the user's own (config.metrics_token or
 * LAGSCOPE_METRICS_TOKEN), taken here too: fixed, the same for every instance, in no file.
 */
#define _GNU_SOURCE
#include "http.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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
  if (strlen(text) != LAGSCOPE__WEB_TOKEN_HEX) return 0;
  for (const char *p = text; *p != '\0'; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return 0;
  return 1;
}

/* The previous launch's token, if the file is a regular file of ours (never a link, FIFO or
 * device: opened relative to the checked folder, without following or waiting) that holds
 * exactly one (and a newline at most). */
static void read_previous(int dirfd, char previous[LAGSCOPE__WEB_TOKEN_HEX + 1]) {
  previous[0] = '\0';
  char *text = NULL;
  size_t len = 0;
  if (lagscope__folder_read(dirfd, TOKEN_FILE, LAGSCOPE__WEB_TOKEN_HEX + 2, &text, &len) !=
      LAGSCOPE_OK)
    return;
  text[strcspn(text, "\n")] = '\0';
  if (is_token(text)) memcpy(previous, text, LAGSCOPE__WEB_TOKEN_HEX + 1);
  lagscope__dealloc(text);
}

static int save(int dirfd, const char *dir, const char *token, char *why, size_t why_size) {
  char temp[64];
  snprintf(temp, sizeof(temp), "." TOKEN_FILE ".%d.tmp", (int)lagscope__process_id());
  int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  int fd = openat(dirfd, temp, flags, 0600);
  if (fd < 0 && errno == EEXIST && unlinkat(dirfd, temp, 0) == 0) fd = openat(dirfd, temp, flags, 0600);
  if (fd < 0) {
    lagscope__explain(why, why_size, "cannot save the viewer token in %s: %s", dir, strerror(errno));
    return LAGSCOPE_ESYS;
  }
  char line[LAGSCOPE__WEB_TOKEN_HEX + 2];
  snprintf(line, sizeof(line), "%s\n", token);
  ssize_t n = write(fd, line, strlen(line));
  int failed = n != (ssize_t)strlen(line) || close(fd) != 0;
  if (failed || renameat(dirfd, temp, dirfd, TOKEN_FILE) != 0) {
    lagscope__explain(why, why_size, "cannot save the viewer token in %s: %s", dir, strerror(errno));
    unlinkat(dirfd, temp, 0);
    return LAGSCOPE_ESYS;
  }
  return LAGSCOPE_OK;
}

int lagscope__web_token_make(const char *dir, char current[LAGSCOPE__WEB_TOKEN_HEX + 1],
                             char previous[LAGSCOPE__WEB_TOKEN_HEX + 1], char *why,
                             size_t why_size) {
  unsigned char bytes[LAGSCOPE__WEB_TOKEN_HEX / 2];
  previous[0] = '\0';
  if (lagscope__random_bytes(bytes, sizeof(bytes)) != LAGSCOPE_OK) {
    lagscope__explain(why, why_size, "the OS gave no random bytes for the viewer's token");
    return LAGSCOPE_ESYS;
  }
  to_hex(bytes, sizeof(bytes), current);
  /* Without the file the token still works for this launch: only the roll-over is lost. A
   * folder that others could have written is not trusted with it either way. */
  char failure[512];
  int dirfd = -1;
  if (lagscope__folder_open(dir, 1, &dirfd, failure, sizeof(failure)) != LAGSCOPE_OK) {
    lagscope__log("viewer token not kept: %s; an open viewer will need the new URL after a "
                  "restart", failure);
    return LAGSCOPE_OK;
  }
  read_previous(dirfd, previous);
  if (save(dirfd, dir, current, failure, sizeof(failure)) != LAGSCOPE_OK)
    lagscope__log("%s: an open viewer will need the new URL after a restart", failure);
  close(dirfd);
  return LAGSCOPE_OK;
}

void lagscope__web_credential_take(const lagscope_config *config,
                                   char out[LAGSCOPE__CREDENTIAL_MAX + 1]) {
  out[0] = '\0';
  const char *given = config->metrics_token, *problem = NULL; /* checked by lagscope_start */
  if (given == NULL) {
    given = getenv("LAGSCOPE_METRICS_TOKEN");
    if (given == NULL || given[0] == '\0') return;
    if (lagscope__credential_problem(given, &problem) != LAGSCOPE_OK) {
      lagscope__log("LAGSCOPE_METRICS_TOKEN %s (16..128 visible ASCII characters, no space): "
                    "ignored; /metrics takes the viewer's token only", problem);
      return;
    }
  }
  snprintf(out, LAGSCOPE__CREDENTIAL_MAX + 1, "%s", given);
}
