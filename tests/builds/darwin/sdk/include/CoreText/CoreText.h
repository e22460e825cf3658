/*
 * Core Text, as much as lagscope uses, declared from Apple's public documentation
 * (developer.apple.com/documentation/coretext) for the Darwin check on Linux. A subset of the
 * SDK's header with the same types; real builds use the SDK.
 */
#ifndef LAGSCOPE_SDK_CORETEXT_H
#define LAGSCOPE_SDK_CORETEXT_H

#include <CoreFoundation/CoreFoundation.h>
#include <CoreGraphics/CoreGraphics.h>

typedef const struct __CTFont *CTFontRef;
typedef const struct __CTLine *CTLineRef;

/* Fonts (CTFont.h). */
CTFontRef CTFontCreateWithName(CFStringRef name, CGFloat size, const CGAffineTransform *matrix);

/* String attributes (CTStringAttributes.h). */
extern const CFStringRef kCTFontAttributeName;
extern const CFStringRef kCTForegroundColorFromContextAttributeName;

/* Lines (CTLine.h). */
CTLineRef CTLineCreateWithAttributedString(CFAttributedStringRef attrString);
void CTLineDraw(CTLineRef line, CGContextRef context);
double CTLineGetTypographicBounds(CTLineRef line, CGFloat *ascent, CGFloat *descent,
                                  CGFloat *leading);

#endif
