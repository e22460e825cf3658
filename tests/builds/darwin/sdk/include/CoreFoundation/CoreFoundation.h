/*
 * CoreFoundation, as much as lagscope uses, declared from Apple's public documentation
 * (developer.apple.com/documentation/corefoundation) for the Darwin check on Linux, where no
 * Apple SDK exists. Real builds use the SDK's header; this one must stay a subset of it with the
 * same types, so that code that compiles here compiles there.
 */
#ifndef LAGSCOPE_SDK_COREFOUNDATION_H
#define LAGSCOPE_SDK_COREFOUNDATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Base types (CFBase.h). */
typedef unsigned char Boolean;
typedef uint8_t UInt8;
typedef uint32_t UInt32;
typedef signed long CFIndex;
typedef unsigned long CFHashCode;
typedef const void *CFTypeRef;
typedef const struct __CFAllocator *CFAllocatorRef;
typedef const struct __CFString *CFStringRef;
typedef const struct __CFDictionary *CFDictionaryRef;
typedef const struct __CFAttributedString *CFAttributedStringRef;
typedef const struct __CFData *CFDataRef;
typedef const struct __CFBoolean *CFBooleanRef;
typedef UInt32 CFStringEncoding;

extern const CFAllocatorRef kCFAllocatorDefault;

/* CFRunLoop.h: the common modes, recognised by this constant's address. */
extern const CFStringRef kCFRunLoopCommonModes;

void CFRelease(CFTypeRef cf);

/* CFType: what a value is. */
typedef unsigned long CFTypeID;
CFTypeID CFGetTypeID(CFTypeRef cf);

/* CFString. */
enum { kCFStringEncodingUTF8 = 0x08000100 };
CFStringRef CFStringCreateWithCString(CFAllocatorRef alloc, const char *cStr,
                                      CFStringEncoding encoding);
CFTypeID CFStringGetTypeID(void);
Boolean CFStringGetCString(CFStringRef theString, char *buffer, CFIndex bufferSize,
                           CFStringEncoding encoding);

/* CFBundle: the app's Info.plist. */
typedef struct __CFBundle *CFBundleRef;
CFBundleRef CFBundleGetMainBundle(void);
CFTypeRef CFBundleGetValueForInfoDictionaryKey(CFBundleRef bundle, CFStringRef key);

/* CFNumber.h: the two CFBoolean values, Booleans and numbers. */
extern const CFBooleanRef kCFBooleanTrue;
extern const CFBooleanRef kCFBooleanFalse;
CFTypeID CFBooleanGetTypeID(void);
Boolean CFBooleanGetValue(CFBooleanRef boolean);
typedef const struct __CFNumber *CFNumberRef;
typedef CFIndex CFNumberType;
enum { kCFNumberIntType = 9 };
CFTypeID CFNumberGetTypeID(void);
Boolean CFNumberGetValue(CFNumberRef number, CFNumberType theType, void *valuePtr);

/* CFDictionary. */
typedef const void *(*CFDictionaryRetainCallBack)(CFAllocatorRef allocator, const void *value);
typedef void (*CFDictionaryReleaseCallBack)(CFAllocatorRef allocator, const void *value);
typedef CFStringRef (*CFDictionaryCopyDescriptionCallBack)(const void *value);
typedef Boolean (*CFDictionaryEqualCallBack)(const void *value1, const void *value2);
typedef CFHashCode (*CFDictionaryHashCallBack)(const void *value);
typedef struct {
  CFIndex version;
  CFDictionaryRetainCallBack retain;
  CFDictionaryReleaseCallBack release;
  CFDictionaryCopyDescriptionCallBack copyDescription;
  CFDictionaryEqualCallBack equal;
  CFDictionaryHashCallBack hash;
} CFDictionaryKeyCallBacks;
typedef struct {
  CFIndex version;
  CFDictionaryRetainCallBack retain;
  CFDictionaryReleaseCallBack release;
  CFDictionaryCopyDescriptionCallBack copyDescription;
  CFDictionaryEqualCallBack equal;
} CFDictionaryValueCallBacks;
extern const CFDictionaryKeyCallBacks kCFTypeDictionaryKeyCallBacks;
extern const CFDictionaryValueCallBacks kCFTypeDictionaryValueCallBacks;
CFDictionaryRef CFDictionaryCreate(CFAllocatorRef allocator, const void **keys,
                                   const void **values, CFIndex numValues,
                                   const CFDictionaryKeyCallBacks *keyCallBacks,
                                   const CFDictionaryValueCallBacks *valueCallBacks);

/* CFAttributedString. */
CFAttributedStringRef CFAttributedStringCreate(CFAllocatorRef alloc, CFStringRef str,
                                               CFDictionaryRef attributes);

/* CFData. */
CFDataRef CFDataCreate(CFAllocatorRef allocator, const UInt8 *bytes, CFIndex length);

#endif
