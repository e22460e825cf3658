/*
 * Reporting: the hang recorder (one hang gathered on the monitor thread), the report's JSON and
 * call tree, the public hang report, and the store on disk.
 * Part of the internal contract: include "internal.h", which includes every stage in order.
 */
#ifndef LAGSCOPE_REPORT_H
#define LAGSCOPE_REPORT_H

#include "base/base.h"
#include "stack/stack.h"
#include "cause/cause.h"
#include "port.h"

/* ---- reports (core/report/report_json.c): one hang, as JSON ------------------------------------------------ */
/* Built on the call tree (call_tree.c) and the verdict (verdict.c), which these entry
 * points alone use (call_tree.h, verdict.h). */
#define LAGSCOPE__REPORT_SCHEMA_VERSION 1
/* A report's call tree nests two levels a stack frame, under the report's object and the
 * tree's root: the store must never refuse one of lagscope's own reports as too deep. */
_Static_assert(2 * LAGSCOPE__MAX_STACK_FRAMES + 8 <= LAGSCOPE__JSON_DEPTH_MAX,
               "lagscope's deepest report would nest past LAGSCOPE__JSON_DEPTH_MAX");

/* What a blocked call of the main thread waited on, named when it was sampled. */
#define LAGSCOPE__REPORT_TARGETS 8
typedef struct lagscope__report_target {
  int32_t syscall;
  uintptr_t arg; /* its first argument: an fd, a path's address, a futex */
  char text[LAGSCOPE__TARGET_MAX];
} lagscope__report_target;

/* What a report is made from: everything the recorder (core/report/hang_recorder.c) gathered for one hang (or
 * a hitch, or a capture); the report module only reads it. Two names for the pipeline: the
 * recorder gathers, the report (this, its JSON, the stored file, the public
 * lagscope_hang_report) tells. */
typedef struct lagscope__report_data {
  char id[64];                 /* unique across launches: "<start wall time>-<pid>-<hang id>" */
  uint64_t hang_id;
  lagscope__report_state state;
  int64_t start_wall_ms;
  uint64_t start_ns;
  uint64_t duration_ns;        /* so far, while in progress */
  uint32_t threshold_ms, sample_interval_ms;
  int count_idle;              /* config.hang_count_idle: an idle hang is counted too */
  int startup;                 /* in the program's start-up (lagscope.h's hang_began.startup) */
  const char *app_name;
  int32_t pid, main_tid;
  const lagscope__stack *samples; /* the main thread, every sample_interval_ms */
  uint32_t sample_count;
  uint64_t samples_dropped;    /* past the sample buffer's capacity */
  /* Samples the main thread could not be captured for (it did not answer, or ran with the
   * capture signal blocked: signal_blocked): moments of the hang that the verdict counts as
   * unknown, never as what the other samples show. */
  uint32_t samples_unseen;
  int signal_blocked;
  const lagscope__stack *threads; /* every thread, captured once at the start */
  const lagscope__thread_usage *thread_info; /* names, CPU time; same order as threads */
  /* What each blocked thread waited on, named when it was captured (the fd may be closed by
   * the time the report is written): thread_count strings of LAGSCOPE__TARGET_MAX; NULL when
   * none. */
  const char *thread_targets;
  /* The same for the main thread's samples: each blocked call named when first sampled (by
   * its key: the call and its first argument), the first LAGSCOPE__REPORT_TARGETS of a hang;
   * a hang in phases (a read, then an open) names each. */
  lagscope__report_target sample_targets[LAGSCOPE__REPORT_TARGETS];
  uint32_t sample_target_count;
  uint32_t thread_count;
  uint64_t thread_cpu_window_ns;  /* over which thread_info CPU is compared to before */
  const lagscope__thread_usage *thread_info_before; /* may be NULL */
  uint32_t thread_count_before;
  lagscope_metrics before;     /* the last metrics before the hang */
  lagscope_metrics during;     /* sampled during it (zero when none yet) */
  int have_during;
} lagscope__report_data;

/* ---- wait targets (core/report/wait_targets.c): what the main thread's samples wait on ---- */
/* The target in targets (count of them) that s waits on, or NULL. F */
const lagscope__report_target *lagscope__report_target_find(const lagscope__report_target *targets,
                                                           uint32_t count,
                                                           const lagscope__stack *s);
/* What a sample of the main thread waits on, named when first met (as it is now) into targets,
 * while there is room (LAGSCOPE__REPORT_TARGETS; a call met later is named when the report is
 * written). known: named already, elsewhere (NULL: none). */
void lagscope__report_target_note(lagscope__report_target *targets, uint32_t *count,
                                  const lagscope__stack *s, const lagscope__report_target *known);
/* r's samples at or after end_ns dropped (the stand-in's, after the hang), and the targets
 * only they named. F */
void lagscope__report_drop_samples_after(lagscope__report_data *r, uint64_t end_ns);

typedef int (*lagscope__resolve_fn)(void *ctx, uintptr_t address, int is_return,
                                    lagscope__stack_frame *out);

/* The report as JSON text (schema in docs/hang-report.md), and the heaviest main-thread
 * stack alone as a JSON array of frames, innermost first. Either out pointer may be NULL.
 * Both are freed with lagscope__dealloc. A */
int lagscope__report_json(const lagscope__report_data *r, lagscope__resolve_fn resolve,
                          void *ctx, char **report_json, char **heaviest_stack_json);

/* Every thread of r (threads, thread_info, main_tid, start_wall_ms as "wall_ms", duration_ns
 * as how long the capture took), for the viewer's "Capture now":
 * {"wall_ms", "duration_ms", "main_thread_tid", "thread_count", "threads": [as in a report]}.
 * Freed with lagscope__dealloc. A */
int lagscope__report_threads_json(const lagscope__report_data *r, lagscope__resolve_fn resolve,
                                  void *ctx, char **out);
/* One stack as a JSON array of frames, innermost first. Freed with lagscope__dealloc. A */
int lagscope__report_stack_json(const lagscope__stack *stack, lagscope__resolve_fn resolve,
                                void *ctx, char **out);

/* The verdict alone, {"kind", "summary", "label"}, for the hang_ended and hitch events (the
 * report's "cause" has the details). heaviest_json: the report's heaviest stack (its telling
 * function names a cpu, sleep or wait hang in the label, as in the report); NULL: the main
 * thread's one stack says. Freed with lagscope__dealloc. A */
int lagscope__report_cause_json(const lagscope__report_data *r, const char *heaviest_json,
                                lagscope__resolve_fn resolve, void *ctx, char **out);

/* Of a stack as lagscope writes it (a JSON array of frames, stack[0, n)), the frame that best
 * says where the app was: the innermost of the app's code (its "code": port.h's lagscope__code,
 * named or not), else (a report without "code") the innermost named one in the module of
 * "main", else the innermost named one that is not lagscope's, else the innermost. 1 with its
 * span in *frame; 0 for an empty array. Read in place: no allocation. F */
int lagscope__report_telling_entry(const char *stack, size_t n, lagscope__json_span *frame);
/* A frame (frame[0, n), an object) as a hang names it: its function, else "module+0xoffset"
 * (the module's file name), decoded into out; 0 and "" when it has neither. F */
int lagscope__report_entry_name(const char *frame, size_t n, char *out, size_t size);
/* The telling frame's name of a NUL-terminated stack (NULL: none); 0 and "" when none. F */
int lagscope__report_telling_function(const char *stack, char *out, size_t size);

/* A hang's or hitch's signature (signature.c; docs/hang-report.md, "The signature"): a hash
 * of the cause's kind and the names of the app's own frames of the heaviest stack, innermost
 * first, at most LAGSCOPE__SIGNATURE_ENTRIES of them, a recursion's repeats counted once. */
#define LAGSCOPE__SIGNATURE_ENTRIES 8          /* deep enough to tell call paths apart */
#define LAGSCOPE__SIGNATURE_FALLBACK_ENTRIES 3 /* named entries when none is the app's */
#define LAGSCOPE__SIGNATURE_NAME 160           /* a name past it is cut: still the same cut */
typedef struct lagscope__signature {
  char id[17];  /* 16 lowercase hex digits */
  char kind[16];
  uint32_t entry_count;
  char entries[LAGSCOPE__SIGNATURE_ENTRIES][LAGSCOPE__SIGNATURE_NAME];
} lagscope__signature;
/* The signature of a stall of the cause kind (NULL or "": "unknown") whose heaviest stack is
 * stack (a JSON array of frames as lagscope writes them; NULL: none). F */
void lagscope__signature_of(const char *kind, const char *stack, lagscope__signature *out);
/* Writes "signature" and "signature_frames" into the object w is in. A */
void lagscope__signature_write(lagscope__json_writer *w, const lagscope__signature *s);

/* The public, immutable, reference-counted report that events carry. A */
lagscope_hang_report *lagscope__hang_report_new(const char *id, uint64_t hang_id,
                                                const char *path, char *json,
                                                char *heaviest_stack_json); /* takes both: lagscope__alloc's */
/* The heaviest main-thread stack as a JSON array; NULL when none. F */
const char *lagscope__hang_report_heaviest_stack(const lagscope_hang_report *report);
/* Gives the report its verdict (lagscope__report_cause_json's; taken) and keeps its label. A */
void lagscope__hang_report_set_cause(lagscope_hang_report *report, char *cause_json);
/* A report read back from disk (a hang of an earlier run, for hang_recovered): its heaviest
 * stack and its cause ({kind, summary, label}, as a hang_ended's) taken from its JSON text,
 * each left out when the text has none of its type. A */
void lagscope__hang_report_read_parts(lagscope_hang_report *report);
/* {"kind", "summary", "label"}; NULL when none. F */
const char *lagscope__hang_report_cause(const lagscope_hang_report *report);
/* The cause's label ("lock · keeper"); "" when none. F */
const char *lagscope__hang_report_label(const lagscope_hang_report *report);
/* The cause's kind ("lock", "idle", ...); "" when none. F */
const char *lagscope__hang_report_kind(const lagscope_hang_report *report);

/* ---- store (core/report/store*.c, by job in store.h): reports on disk, never lost ---------------------- */
typedef struct lagscope__store lagscope__store;
/* Opens (creating with its parents, 0700) the folder, refused unless it is ours and nobody else
 * can write it or a folder above it (see lagscope__folder_open); lists the reports it holds
 * and the temporary files interrupted writes left, for recovery. A */
int lagscope__store_open(const char *dir, uint32_t max_reports, uint64_t max_bytes,
                         lagscope__store **out, char *why, size_t why_size);
void lagscope__store_close(lagscope__store *s);
/* Writes <dir>/<id>.json atomically (temporary file, fsync, rename, fsync of the folder), then
 * removes the oldest reports past the bounds (never the one just written; only whole, valid
 * reports count, each file read once). Writes the final path to path_out. On failure (full
 * disk, read-only folder) returns LAGSCOPE_ESYS with why; the old file, if any, is intact.
 * When the app has closed or reused the folder's descriptor, the folder is opened anew first
 * (lagscope__store_reopened counts it). The writer's: one thread (the monitor). A */
int lagscope__store_write(lagscope__store *s, const char *id, const char *json, char *path_out,
                          size_t path_size, char *why, size_t why_size);
/* The same without the bounds or the new descriptor: recovery's rewrite of a report an earlier
 * run left, on its own thread beside the writer. A */
int lagscope__store_rewrite(const lagscope__store *s, const char *id, const char *json,
                            char *path_out, size_t path_size, char *why, size_t why_size);
/* How often the folder was opened anew because the app took its descriptor (0 without a
 * store), and the folder's path. F */
uint32_t lagscope__store_reopened(const lagscope__store *s);
const char *lagscope__store_dir(const lagscope__store *s);
/* What is known of a hang whose first report was cut short by the process's death (the
 * temporary file of its first write, which does not hold a whole report): its id from the
 * file's name, and what the head of the text holds (report_json.c writes the start and the
 * first sample right after the id). */
typedef struct lagscope__store_lost {
  const char *id;          /* the report's id (the temporary file's name: .<id>.json.tmp) */
  const char *path;        /* the temporary file */
  uint64_t hang_id;        /* from the id: "<start>-<pid>-<hang id>"; 0 when it says none */
  int64_t pid;             /* likewise; 0 */
  int64_t start_wall_ms;   /* the head's start.wall_ms, else the id's stamp; -1: neither */
  const char *first_sample; /* the head's first_sample, whole ({"t_ms", "state", "stack"}),
                               NUL-terminated; NULL when it was not written whole */
  uint64_t bytes;          /* how much of the report was written */
} lagscope__store_lost;
/* At start, over the files the folder held at open (never a report of this run), once per
 * open: each report still in progress is rewritten as ended by termination and handed to
 * found(); each unreadable, truncated, non-JSON or other-schema file to corrupt() with a
 * sentence, and left alone. The temporary file of a write the process's death cut short is
 * the hang's report when it holds a whole one (it replaces <id>.json and is recovered as
 * above, and handed to found() even when final: its end was never told); else, when no
 * <id>.json is there, it is handed to lost() with what it holds, then deleted (with lost
 * NULL, kept). Stops between two files once *stop is set (stop may be NULL). Returns ESYS
 * when a report could not be rewritten (handed over all the same), ENOMEM, or the listing's
 * error. May run on its own thread while another writes through s. A */
int lagscope__store_recover(lagscope__store *s,
                            void (*found)(void *ctx, const char *id, const char *path,
                                          const char *json),
                            void (*corrupt)(void *ctx, const char *path, const char *why),
                            void (*lost)(void *ctx, const lagscope__store_lost *hang),
                            void *ctx, const _Atomic int *stop);
/* Tests only (no app's build calls it): fn is called at each step of every write of a store,
 * with the temporary file's name: "create" before the file is made (fd -1), "write" once made
 * (its fd), "sync" once written, before fsync (its fd), "rename" once closed (fd -1). A
 * non-zero return fails the step with that errno (EROFS: a read-only folder, which root's
 * chmod cannot make); fn may also end the process there (a death mid-write). NULL: none. F */
typedef int (*lagscope__store_hook_fn)(const char *step, const char *temp, int fd);
void lagscope__store_test_hook(lagscope__store_hook_fn fn);

/* A report whose final write failed (a full disk): marks <id>.json, without needing space, as
 * ended at ended_wall_ms, so that the next start does not call it ended by termination. F */
int lagscope__store_mark_ended(lagscope__store *s, const char *id, int64_t ended_wall_ms);

/* The folder (store_folder.c). Opens the folder dir component by component (openat), creating missing ones with mode 0700
 * when create is set, and returns its fd in *out (O_CLOEXEC). Refused (ESYS, with why) unless
 * the folder belongs to this user and nobody else can write it, and every folder above it
 * belongs to root or this user and is not writable by others unless sticky (as /tmp); a
 * symbolic link on the way is followed only when root or this user made it. ENOENT when it
 * is missing and create is not set. F */
int lagscope__folder_open(const char *dir, int create, int *out, char *why, size_t why_size);
/* A regular file of the folder dirfd (never a link, FIFO or device: EPARSE), of at most limit
 * bytes (ELIMIT); *text NUL-terminated, free with lagscope__dealloc. ENOENT, ESYS. A */
int lagscope__folder_read(int dirfd, const char *name, size_t limit, char **text, size_t *len);

/* The check (store_check.c). Why text is not a report the store would keep as <id>.json (a sentence to follow "the
 * file"), or NULL when it is one. A */
const char *lagscope__store_check(const char *text, size_t len, const char *id, char *why,
                                  size_t why_size);
/* What recovery (store_recover.c) makes of <id>.json's text: EPARSE with *problem when it is no report; else
 * *updated is the rewritten text (lagscope__dealloc), or NULL when the report is final
 * already. ended_wall_ms >= 0: the file was marked ended (lagscope__store_mark_ended). A */
int lagscope__store_recovered_text(const char *text, size_t len, const char *id,
                                   int64_t ended_wall_ms, char **updated, char *why,
                                   size_t why_size, const char **problem);

/* Reading while the monitor writes (the viewer; store_check.c): no store needed. */
typedef struct lagscope__store_entry {
  char id[64];
  uint64_t bytes;
} lagscope__store_entry;
/* The reports in dir (regular files of the store's name that begin as its reports do), newest
 * first (ids begin with their UTC start time); a missing folder is an empty list. Free *entries with lagscope__dealloc. A */
int lagscope__store_list(const char *dir, lagscope__store_entry **entries, size_t *count);
/* One report's text (free with lagscope__dealloc), read with the store's checks: ENOENT for an
 * id of no file or not of the id's form, EPARSE for a file that is not a report the store
 * would keep (a link, a FIFO, another document), ELIMIT for a file past the store's size
 * bound, ESYS otherwise (a folder that lagscope__folder_open refuses). A */
int lagscope__store_read(const char *dir, const char *id, char **text, size_t *len);
/* The hangs whose reports the bounds deleted, counted by signature (store_tally.c): fn is called
 * once a signature (NULL: reports without one, and signatures past the tally's bound of 1000),
 * with what the tally keeps; kind and label are the newest hang's (NULL when it had none). The
 * strings live for the call. LAGSCOPE_OK when nothing was evicted yet; else the folder's or
 * the read's error. A */
typedef struct lagscope__store_tallied {
  const char *signature, *kind, *label;
  uint64_t count;
  double total_ms, max_ms;
  int64_t first_wall_ms, last_wall_ms;
} lagscope__store_tallied;
typedef void (*lagscope__store_tally_fn)(void *ctx, const lagscope__store_tallied *hangs);
int lagscope__store_tally_read(const char *dir, lagscope__store_tally_fn fn, void *ctx);

/* ---- recovery at start (core/report/recover_publish.c): what store recovery finds, published --- */
/* Held by the hang recorder, zeroed; store and dir (for messages) outlive it. */
typedef struct lagscope__recovery {
  lagscope__store *store;
  const char *dir;
  lagscope__thread *thread;
  _Atomic int stop, done;
} lagscope__recovery;
/* Publishes hang_recovered for each report an earlier run left in progress in store (hang_lost
 * for one its first write never finished, an error event for each file that is no report),
 * from a thread of its own; without a thread, before returning. A */
void lagscope__recovery_start(lagscope__recovery *r, lagscope__store *store, const char *dir);
/* Joins its thread once it is done (no wait). A */
void lagscope__recovery_tidy(lagscope__recovery *r);
/* Asks it to stop, and joins it. A */
void lagscope__recovery_stop(lagscope__recovery *r);

/* ---- the stand-in sampler (core/report/standin.c): the main thread sampled while the monitor
 * does slow work during a hang ---- */
typedef struct lagscope__standin lagscope__standin;
/* Its thread, parked, and room for capacity samples; NULL when either cannot be had. A */
lagscope__standin *lagscope__standin_new(uint32_t capacity, uint64_t interval_ns,
                                         uint64_t timeout_ns);
void lagscope__standin_free(lagscope__standin *s); /* joins its thread. A */
/* Samples from one interval on, every interval, until stopped; the caller captures nothing
 * meanwhile. L (its own lock) */
void lagscope__standin_start(lagscope__standin *s);
/* Parks it (a capture under way ends first) and hands over what it took since the start:
 * samples and their capture results, valid until the next start, and how many were due while
 * it was full. L */
uint32_t lagscope__standin_stop(lagscope__standin *s, const lagscope__stack **samples,
                                const int **results, uint32_t *dropped);
/* The stand-in as the hang recorder throws it (zeroed at first): on for the monitor's slow
 * work during a hang (the usage reader made at the first), off at its end, let go when unused. */
typedef struct lagscope__standin_switch {
  lagscope__standin *standin;
  int on;
  uint64_t used_ns; /* when it was last switched off */
} lagscope__standin_switch;
/* On, unless it is: samples every interval_ns from here; stays off when the usage reader cannot be
 * had (the hang's samples pause meanwhile). A, L */
void lagscope__standin_switch_on(lagscope__standin_switch *w, uint64_t interval_ns,
                                 uint64_t timeout_ns);
/* Off: what it took since on, as lagscope__standin_stop hands it; 0 (and *dropped 0) when it
 * was not on. L */
uint32_t lagscope__standin_switch_off(lagscope__standin_switch *w, const lagscope__stack **samples,
                                      const int **results, uint32_t *dropped);
/* The usage reader let go when it has not been on for keep_ns since now_ns. A */
void lagscope__standin_switch_tidy(lagscope__standin_switch *w, uint64_t now_ns, uint64_t keep_ns);
void lagscope__standin_switch_free(lagscope__standin_switch *w); /* A */

/* ---- hangs (core/report/hang_recorder.c): one hang recorded, on the monitor thread --------------------------- */
typedef struct lagscope__hang_recorder lagscope__hang_recorder;
/* Opens the report store (errors become error events) and prepares capture. A */
lagscope__hang_recorder *lagscope__hang_recorder_new(const lagscope_config *config);
void lagscope__hang_recorder_free(lagscope__hang_recorder *h);
/* Writes again, in order, the final reports the folder refused, every few seconds at most. A */
void lagscope__hang_recorder_retry(lagscope__hang_recorder *h);
/* Lets the symbol index go when no report has needed it for 30 s (and no hang is on), so
 * that its memory goes back to the system; joins recovery's thread once it is done. A */
void lagscope__hang_recorder_tidy(lagscope__hang_recorder *h, uint64_t now_ns);
/* How many final reports wait for the folder to take them (the next retry writes them). F */
int lagscope__hang_recorder_unsaved(const lagscope__hang_recorder *h);
/* Publishes hang_recovered for reports an earlier run left in progress (and an error event
 * for each file that is no report), from a thread of its own that ends when done; stopped
 * and joined by lagscope__hang_recorder_free. When no thread can be started, recovers before
 * returning. A */
void lagscope__hang_recorder_recover(lagscope__hang_recorder *h);
/* The hang began: captures the main thread, then every thread (lagscope__hang_recorder_save
 * writes the report). A */
void lagscope__hang_recorder_begin(lagscope__hang_recorder *h, uint64_t hang_id,
                                   uint64_t start_ns, int64_t start_wall_ms, int startup,
                                   const lagscope_metrics *before,
                                   const lagscope__usage *sample_before);
void lagscope__hang_recorder_sample(lagscope__hang_recorder *h); /* one main-thread sample */
/* The main thread is late but not hung yet: one sample into a ring of the last
 * LAGSCOPE__EARLY_SAMPLES (allocated at the first), which the next hang's report starts with,
 * those taken at or after its start. Forget: it answered in time; the ring is emptied. A/F */
void lagscope__hang_recorder_sample_early(lagscope__hang_recorder *h);
void lagscope__hang_recorder_forget_early(lagscope__hang_recorder *h);
/* A hitch: the ring's samples from start_ns on, taken wholly before its end, as its heaviest
 * stack, in a payload (for a hitch event's stack_json) that also holds its cause and telling
 * function, *cause_json (NULL without samples) and *function ("" when none) pointing into it.
 * Empties the ring. NULL when out of memory. A */
char *lagscope__hang_recorder_hitch(lagscope__hang_recorder *h, uint64_t start_ns,
                                    uint64_t duration_ns, uint32_t *sample_count,
                                    const char **cause_json, const char **function);
#define LAGSCOPE__EARLY_SAMPLES 64 /* 640 ms at 10 ms: a threshold's worth, at most 1000 ms */
void lagscope__hang_recorder_during(lagscope__hang_recorder *h, const lagscope_metrics *m);
/* Around slow work while a hang lasts (symbols, a write): the stand-in samples the main thread
 * meanwhile, and its samples join the hang's at the end. Nothing when no hang is on. A/L */
void lagscope__hang_recorder_slow_begin(lagscope__hang_recorder *h);
void lagscope__hang_recorder_slow_end(lagscope__hang_recorder *h);
/* While the hang lasts: its report as it stands, with duration_ns (so far, the process's
 * stopped time left out), written over the last one (the store renames: a kill leaves the one
 * or the other whole). Returns the time it took. A */
uint64_t lagscope__hang_recorder_save(lagscope__hang_recorder *h, uint64_t duration_ns);
/* While a hang lasts: the main thread's latest sample as a JSON array of frames, in a payload
 * (lagscope__payload_new) for a hang_sample event; NULL when there is none. A */
char *lagscope__hang_recorder_latest_stack(lagscope__hang_recorder *h, uint32_t *sample_count);
/* Captures every thread now (lagscope's own excepted) into buffers of its own, an active hang's
 * untouched, and returns them as lagscope__report_threads_json does; before (may be NULL) is
 * the usage reader's last reading, for CPU. A */
int lagscope__hang_recorder_capture_now(lagscope__hang_recorder *h,
                                        const lagscope__usage *before, char **out);
/* The hang ended at end_ns (the main thread's answer): the final report, stored, without the
 * samples taken from then on; the payload for hang_ended (NULL on failure). A */
lagscope_hang_report *lagscope__hang_recorder_end(lagscope__hang_recorder *h,
                                                  uint64_t duration_ns, uint64_t end_ns);

#endif /* LAGSCOPE_REPORT_H */
