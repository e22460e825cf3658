/* What the report store's files share, and no other file: the store's bounds, its struct, the
 * folder's listing and the few helpers more than one of them calls. The rest of the core sees
 * only report.h's store entry points. The store is five files, by job:
 *
 *   store.c          the store opened and closed, reports written atomically, bounds kept
 *   store_folder.c   the folder opened safely, a file read from it, the store's names, listing
 *   store_check.c    what the store accepts as a report; the viewer's list and read
 *   store_recover.c  at start, the reports an earlier run left in progress closed and handed over
 *   store_tally.c    the hangs whose reports the bounds deleted, counted by signature
 *
 * Tags as in internal.h: A allocates (lagscope__alloc), F neither allocates nor locks; nothing
 * here locks. POSIX file calls only (these files build for Linux, macOS and iOS alike). */
#ifndef LAGSCOPE_STORE_H
#define LAGSCOPE_STORE_H

#include "internal.h"

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* A file larger than this is not one of ours (a report's tree is bounded well below). */
#define LAGSCOPE__STORE_MAX_FILE_BYTES (16u * 1024u * 1024u)
#define LAGSCOPE__STORE_MAX_ID 128
#define LAGSCOPE__STORE_PATH_MAX 1024
/* A report whose final write failed (a full disk) is marked by its mode, which needs no space:
 * the store writes reports 0600. */
#define LAGSCOPE__STORE_MODE_ENDED 0400

/* A report file found by listing the folder. */
typedef struct lagscope__store_listed {
  char name[LAGSCOPE__STORE_MAX_ID + 8];
  time_t mtime;
  uint64_t size;
  int uncounted; /* an idle hang's ("counted":false): evicted before any other */
  uint64_t inode; /* with size and mtime: the file as it is, for the bounds' memory (the store
                     writes by rename: a rewrite is a new inode) */
  int valid, state; /* the bounds': a whole, valid report, and its state */
  int temp; /* recovery's: the temporary file of name (.<name>.tmp), left by a write cut short */
} lagscope__store_listed;

/* What the bounds learnt of a file: whether it holds a whole, valid report, and its state.
 * Known by name, inode, size and modification time: a file that changes is checked again. */
typedef struct lagscope__store_known {
  char name[LAGSCOPE__STORE_MAX_ID + 8];
  uint64_t inode, size;
  time_t mtime;
  int valid, state;
} lagscope__store_known;

typedef struct lagscope__store_listing {
  lagscope__store_listed *items;
  size_t len, capacity;
} lagscope__store_listing;

struct lagscope__store {
  char dir[LAGSCOPE__STORE_PATH_MAX];
  /* The folder, checked once: every file is opened relative to it. The app may close its number
   * and open a file or folder of its own there: the number is checked before each write
   * (folder), and a lost one is never used or closed again but the folder opened anew. */
  _Atomic int dirfd;
  lagscope__owned_fd folder;
  uint32_t reopened;    /* times the folder was opened anew (the writer's: the monitor) */
  /* What the bounds learnt of the files, by name, so that each is read once, not at every
   * write; the writer's alone (recovery's rewrites keep no bounds). */
  lagscope__store_known *known;
  size_t known_len, known_capacity;
  uint32_t max_reports; /* 0: no limit */
  uint64_t max_bytes;   /* 0: no limit */
  /* The files found at open, by name, for recovery alone (which empties it); the listing's
   * error, if it failed. */
  lagscope__store_listing at_open;
  int at_open_rc;
};

/* ---- store_folder.c ----------------------------------------------------------------------- */
/* snprintf into out: 0, or -1 when it did not fit. F */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int lagscope__store_path_join(char *out, size_t size, const char *format, ...);
/* Reads the regular file name in the folder dirfd, never following a link nor waiting on a
 * FIFO or device: at most limit bytes (*text NUL-terminated, lagscope__alloc). Returns 0;
 * LAGSCOPE_ENOENT; LAGSCOPE_EPARSE when it is not a regular file; LAGSCOPE_ELIMIT when larger
 * than limit (with whole) or, without whole, reads the first limit bytes only; LAGSCOPE_ESYS
 * (errno set). A */
int lagscope__store_read_at(int dirfd, const char *name, size_t limit, int whole, char **text,
                            size_t *len);
/* 1 when id is a report's id: 1 to LAGSCOPE__STORE_MAX_ID of [A-Za-z0-9._-], not starting
 * with '.' and without "..". F */
int lagscope__store_valid_id(const char *id);
/* The id of a report's file name ("<id>.json", which the listing checked). F */
void lagscope__store_report_stem(const char *name, char stem[LAGSCOPE__STORE_MAX_ID + 8]);
/* The files with the store's name pattern in the folder: regular files (not followed), within
 * the size bound; with own_only, only those that begin as a report does. With temps, the
 * store's temporary files too (regular ones: listed by their report's name, temp set).
 * Appends to l (free its items with lagscope__dealloc, also on failure); 0, LAGSCOPE_ESYS or
 * LAGSCOPE_ENOMEM with why. A */
int lagscope__store_list_dir(int dirfd, const char *dir, lagscope__store_listing *l,
                             int temps, int own_only, char *why, size_t why_size);
/* The temporary file's name of a report's ("<id>.json": ".<id>.json.tmp"). F */
void lagscope__store_temp_name(const char *name, char temp[LAGSCOPE__STORE_MAX_ID + 16]);
/* Listed files by name, a report's temporary file first, for lagscope__sort. F */
int lagscope__store_by_name(const void *a, const void *b);

/* ---- store_tally.c ------------------------------------------------------------------------ */
/* The evicted hangs' tally's file in the folder (not a report's name: never listed as one). */
#define LAGSCOPE__STORE_TALLY "evicted-hangs"
/* Counts the report text[0, len), about to be deleted by the bounds, in the folder dirfd's
 * tally. Best effort: a tally that cannot be written stays as it was. The writer's alone. A */
void lagscope__store_tally_add(int dirfd, const char *text, size_t len);

/* ---- store.c ------------------------------------------------------------------------------ */
/* Writes json to the temporary file temp of the folder dirfd, syncs it and renames it to name:
 * 0, or -1 with errno and *step the call that failed. */
int lagscope__store_write_renamed(int dirfd, const char *temp, const char *name,
                                  const char *json, const char **step);

/* ---- store_check.c ------------------------------------------------------------------------ */
/* Why a report file is unusable, or NULL when it is fine (*state is then its state): stem is
 * the id its file name gives. F */
const char *lagscope__store_check_report(const char *text, size_t len, const char *stem,
                                         int *state, char *why, size_t why_size);

/* ---- store_recover.c ---------------------------------------------------------------------- */
/* What the head of a report cut short (text[0, len), anybody's bytes) says of the hang whose
 * id is stem: l->start_wall_ms (left as it is when not written whole) and *first, its first
 * sample's text (lagscope__dealloc; NULL when not written whole), when the head is stem's
 * report's. Its members count once a ',' or '}' follows their value. A */
void lagscope__store_read_head(const char *text, size_t len, const char *stem,
                               lagscope__store_lost *l, char **first);

#endif /* LAGSCOPE_STORE_H */
