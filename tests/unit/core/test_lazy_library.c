/* The port's loader of libraries when first needed (lagscope__lazy_library_load, core/port.h;
 * core/linux/lazy_library.c), which libdw, liblzma and the viewer's civetweb and cJSON go
 * through: a table typed from an X-macro list, filled once; the messages for a library that
 * cannot be opened and one that lacks a name; a failure retried or final as asked; threads
 * that load at once all find the table filled. glibc's libm.so.6 is the library: its
 * functions are declared by math.h and known without it. */
#define _GNU_SOURCE
#include "cases.h"
#include "check.h"
#include "internal.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#define LIBM_CALLS(XX) XX(cos) XX(sqrt)

static LAGSCOPE__LAZY_TABLE(LIBM_CALLS) libm;
static const char *const libm_names[] = {LIBM_CALLS(LAGSCOPE__LAZY_NAME)};
static lagscope__lazy_library libm_library =
    LAGSCOPE__LAZY_LIBRARY("libm.so.6", libm_names, libm.found, 0);

static void test_loads(void) {
  char why[256] = "";
  CHECK_MSG(lagscope__lazy_library_load(&libm_library, why, sizeof(why)) == LAGSCOPE_OK, "%s",
            why);
  CHECK_EQ_INT(libm_library.count, 2);
  CHECK(libm.call.cos(0.0) == 1.0);
  CHECK(libm.call.sqrt(16.0) == 4.0);
  CHECK(lagscope__lazy_library_load(&libm_library, NULL, 0) == LAGSCOPE_OK); /* once */
}

static void test_missing_name(void) {
  static const char *const names[] = {"cos", "lagscope_no_such_function"};
  static void *found[2];
  static lagscope__lazy_library lib = LAGSCOPE__LAZY_LIBRARY("libm.so.6", names, found, 1);
  char why[256] = "";
  CHECK(lagscope__lazy_library_load(&lib, why, sizeof(why)) == LAGSCOPE_ESYS);
  CHECK_MSG(strcmp(why, "libm.so.6 has no lagscope_no_such_function") == 0, "why: %s", why);
}

static void test_missing_library(void) {
  static const char *const names[] = {"f"};
  static void *found[1];
  static lagscope__lazy_library retried =
      LAGSCOPE__LAZY_LIBRARY("liblagscope-none.so.9", names, found, 1);
  static lagscope__lazy_library final =
      LAGSCOPE__LAZY_LIBRARY("liblagscope-none.so.9", names, found, 0);
  const char *said = "liblagscope-none.so.9 could not be loaded: ";
  char why[256] = "";
  CHECK(lagscope__lazy_library_load(&retried, why, sizeof(why)) == LAGSCOPE_ESYS);
  CHECK_MSG(strncmp(why, said, strlen(said)) == 0, "why: %s", why);
  why[0] = '\0'; /* tried again: said again */
  CHECK(lagscope__lazy_library_load(&retried, why, sizeof(why)) == LAGSCOPE_ESYS);
  CHECK_MSG(strncmp(why, said, strlen(said)) == 0, "why: %s", why);
  CHECK(lagscope__lazy_library_load(&final, why, sizeof(why)) == LAGSCOPE_ESYS);
  why[0] = '\0'; /* not tried again: nothing said */
  CHECK(lagscope__lazy_library_load(&final, why, sizeof(why)) == LAGSCOPE_ESYS);
  CHECK_MSG(why[0] == '\0', "why: %s", why);
}

#define SQRT_CALLS(XX) XX(sqrt)
static LAGSCOPE__LAZY_TABLE(SQRT_CALLS) shared;
static const char *const shared_names[] = {SQRT_CALLS(LAGSCOPE__LAZY_NAME)};
static lagscope__lazy_library shared_library =
    LAGSCOPE__LAZY_LIBRARY("libm.so.6", shared_names, shared.found, 0);

static void *load_and_call(void *arg) {
  (void)arg;
  int ok = lagscope__lazy_library_load(&shared_library, NULL, 0) == LAGSCOPE_OK &&
           shared.call.sqrt(9.0) == 3.0;
  return ok ? &shared : NULL;
}

static void test_threads(void) {
  pthread_t threads[8];
  for (int i = 0; i < 8; i++) CHECK(pthread_create(&threads[i], NULL, load_and_call, NULL) == 0);
  for (int i = 0; i < 8; i++) {
    void *result = NULL;
    CHECK(pthread_join(threads[i], &result) == 0);
    CHECK_MSG(result == &shared, "thread %d did not find the table filled", i);
  }
}

static const test_case cases[] = {
    TEST_CASE(loads),
    TEST_CASE(missing_name),
    TEST_CASE(missing_library),
    TEST_CASE(threads),
};

int main(int argc, char **argv) { return run_test_case(argc, argv, cases, CASE_COUNT(cases)); }
