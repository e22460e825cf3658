/* Test assertions in the manner of libuv's task.h: a failure prints file:line and what it
 * compared, then aborts, so CTest reports the test failed and the process leaves a core. */
#ifndef LAGSCOPE_TEST_CHECK_H
#define LAGSCOPE_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                     \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);          \
      abort();                                                                          \
    }                                                                                   \
  } while (0)

/* CHECK with a printf-style message saying what went wrong. */
#define CHECK_MSG(cond, ...)                                                            \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);          \
      fprintf(stderr, __VA_ARGS__);                                                     \
      fputc('\n', stderr);                                                              \
      abort();                                                                          \
    }                                                                                   \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                              \
  do {                                                                                  \
    long long check_a_ = (long long)(a), check_b_ = (long long)(b);                     \
    if (check_a_ != check_b_) {                                                         \
      fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", __FILE__,       \
              __LINE__, #a, #b, check_a_, check_b_);                                    \
      abort();                                                                          \
    }                                                                                   \
  } while (0)

#define CHECK_NEAR(a, b, tolerance)                                                     \
  do {                                                                                  \
    double check_a_ = (double)(a), check_b_ = (double)(b);                              \
    if (check_a_ - check_b_ > (tolerance) || check_b_ - check_a_ > (tolerance)) {       \
      fprintf(stderr, "%s:%d: CHECK failed: %s ≈ %s (%g vs %g, tolerance %g)\n",        \
              __FILE__, __LINE__, #a, #b, check_a_, check_b_, (double)(tolerance));     \
      abort();                                                                          \
    }                                                                                   \
  } while (0)

/* ThreadSanitizer delays asynchronous signals until the thread next enters one of its
 * interceptors: a thread spinning without a call to libc never gets the capture signal. (A
 * thread that calls libc gets it late; the capture then walks from the handler, see
 * core/linux/capture_signal.c.) Tests of a pure spin skip under it; threads blocked in the
 * kernel are read without a signal and are tested as they are, and the tests that it must not
 * crash still run. */
#if defined(__SANITIZE_THREAD__)
#define LAGSCOPE_TEST_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LAGSCOPE_TEST_UNDER_TSAN 1
#endif
#endif
#define TEST_SKIP_CODE 77 /* CTest's SKIP_RETURN_CODE */
#ifdef LAGSCOPE_TEST_UNDER_TSAN
#define SKIP_UNDER_TSAN()                                                               \
  do {                                                                                  \
    printf("skipped: ThreadSanitizer defers signals, so a capture cannot see where the " \
           "thread is\n");                                                              \
    return TEST_SKIP_CODE;                                                              \
  } while (0)
#else
#define SKIP_UNDER_TSAN() ((void)0)
#endif

#endif
