/*
 * The internal contract. The portable core is a folder per stage of the data flow, each with
 * one header that declares what its files share with the rest:
 *
 *   port.h             what each OS folder (core/linux/, core/darwin/) implements: below
 *                      every stage, it names nothing of theirs
 *   base/base.h        primitives: messages (and publishing's declarations), the config table,
 *                      the counted heap, payloads, sorting, lagscope's threads, JSON written
 *                      and checked as text, the names more than one stage reads
 *   detect/detect.h    the main thread's marks, display frames, the watchdog, usage math
 *   stack/stack.h      a thread's stack captured, walked and symbolicated
 *   cause/cause.h      why a thread was not running (one stack's cause)
 *   report/report.h    the hang recorder, the report's JSON, call tree and verdict, the store
 *   deliver/deliver.h  the bus, publishing, events as JSON, the dispatcher and consumers
 *
 * and, here, the instance: autostart, the monitor thread, the lifecycle. Every file includes
 * this header, never a stage header alone. A stage's files use only its own and the earlier
 * stages' names, in the order of the includes below (tests/map/stage-order.mjs reads them:
 * ctest map_stage_order); the instance, the top, uses them all. Names: lagscope__module_verb.
 *
 * Each function says whether it allocates (A), takes a lock (L), or is lock-free and
 * allocation-free (F). Nothing here is async-signal-safe unless it says so.
 */
#ifndef LAGSCOPE_INTERNAL_H
#define LAGSCOPE_INTERNAL_H

#include "lagscope.h"
#include "port.h" /* what each OS folder implements */
#include "base/base.h"
#include "detect/detect.h"
#include "stack/stack.h"
#include "cause/cause.h"
#include "report/report.h"
#include "deliver/deliver.h"

/* ---- autostart (core/autostart.c): starting without the app's code ---------------------------- */
/* A setting's text: 0 for "0", "no", "false", "off"; 1 for "1", "yes", "true", "on" (any case);
 * -1 for NULL or anything else. F */
int lagscope__autostart_setting(const char *text);
/* Whether lagscope starts itself: the environment's LAGSCOPE_AUTOSTART (environment, NULL when
 * unset) decides when it is a setting, else the app's own (app_setting: Info.plist's
 * LagscopeAutoStart on Apple, 0 or 1; -1 when it has none), else yes. why gets the reason (""
 * for the default; a setting that is not one is said and ignored). F */
int lagscope__autostart_wanted(const char *environment, int app_setting, char *why,
                               size_t why_size);

/* ---- the monitor (core/monitor.c): watchdog, frames, usage, hangs, on a thread of its own ----- */
typedef struct lagscope__monitor lagscope__monitor;
/* config and dispatcher outlive the monitor. A */
int lagscope__monitor_new(const lagscope_config *config, lagscope__dispatcher *dispatcher,
                          lagscope__monitor **out);
int lagscope__monitor_start(lagscope__monitor *m); /* A */
void lagscope__monitor_stop(lagscope__monitor *m); /* joins: a hang still open ends here */
void lagscope__monitor_free(lagscope__monitor *m);
/* Asks the monitor thread to capture every thread now and waits up to timeout_ns; *json is
 * freed with lagscope__dealloc. LAGSCOPE_ETIMEDOUT when it did not answer in time. Any other
 * thread; one request at a time. A, L */
int lagscope__monitor_capture_now(lagscope__monitor *m, char **json, uint64_t timeout_ns);

/* ---- the instance's life (core/lifecycle.c) ------------------------------------------------------ */
/* lagscope__monitor_capture_now on the running instance, for consumers (the viewer). A, L */
int lagscope__capture_now(char **json, uint64_t timeout_ns);

#endif /* LAGSCOPE_INTERNAL_H */
