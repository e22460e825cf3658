/*
 * Messages to Objective-C objects from C, for core/darwin/ and hud/darwin/: objc_msgSend has no
 * prototype of its own, so each call casts it to the exact type of the method it sends, and
 * arguments and results travel by the platform's C calling convention (arm64 has no variadic
 * one for it). The two sends every file needs are here; one of another type casts in place.
 */
#ifndef LAGSCOPE_DARWIN_OBJC_SEND_H
#define LAGSCOPE_DARWIN_OBJC_SEND_H

#include <objc/message.h>
#include <objc/runtime.h>

/* [receiver selector], its object result. */
static inline id send(id receiver, const char *selector) {
  return ((id (*)(id, SEL))objc_msgSend)(receiver, sel_registerName(selector));
}

/* [receiver selector], no result. */
static inline void send_void(id receiver, const char *selector) {
  ((void (*)(id, SEL))objc_msgSend)(receiver, sel_registerName(selector));
}

#endif /* LAGSCOPE_DARWIN_OBJC_SEND_H */
