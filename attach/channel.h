/* lagscope-run's channel: how the preload's events reach lagscope-run, and how lagscope-run
 * knows that every one did (issue 42, item 3).
 *
 * The events go, one JSON line each, to a file lagscope-run made in its private folder (0700,
 * in a folder nobody else can rename things in) before it started the program; the preload
 * opens it for each line by path, never creating it and never through a link, and writes only
 * when it is still that file (its device and inode, LAGSCOPE_RUN_CHANNEL_ID). Beside it, a
 * page of shared memory (a sealed memfd: no path, never truncated, so never SIGBUS in the
 * program) counts the lines begun, written and failed; the preload maps it in its constructor
 * and closes the descriptor before main (LAGSCOPE_RUN_STATUS: "fd:dev:ino"). A line that could
 * not be written (a full disk, the file removed or replaced, an error), or a channel file that
 * holds other lines than the preload wrote, fails the run: no verdict
 * (LAGSCOPE_RUN_CHANNEL_FAILED). */
#ifndef LAGSCOPE_ATTACH_CHANNEL_H
#define LAGSCOPE_ATTACH_CHANNEL_H

#include <stdatomic.h>
#include <stdint.h>

#define LAGSCOPE_RUN_CHANNEL_FAILED 4 /* lagscope-run's exit when the channel failed */

/* Why a line failed, beside its errno (first_reason, first_errno: the first failure). */
enum {
  LAGSCOPE__CHANNEL_OPEN = 1, /* the file could not be opened (removed, a link: errno) */
  LAGSCOPE__CHANNEL_REPLACED, /* another file is at its path */
  LAGSCOPE__CHANNEL_WRITE,    /* the write failed (a full disk, a limit: errno) */
  LAGSCOPE__CHANNEL_SHORT     /* the write was cut short */
};

typedef struct lagscope__channel_status {
  atomic_uint_least64_t begun;   /* lines the preload began to write */
  atomic_uint_least64_t written; /* and wrote whole */
  atomic_uint_least64_t failed;  /* and could not */
  atomic_int first_reason;       /* LAGSCOPE__CHANNEL_*, 0 while none failed */
  atomic_int first_errno;
  atomic_int attached;           /* 1 once the preload mapped it */
} lagscope__channel_status;

#endif
