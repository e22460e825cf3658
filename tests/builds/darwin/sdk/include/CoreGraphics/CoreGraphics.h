/*
 * CoreGraphics, as much as lagscope uses, declared from Apple's public documentation
 * (developer.apple.com/documentation/coregraphics) for the Darwin check on Linux. A subset of
 * the SDK's header with the same types; real builds use the SDK.
 */
#ifndef LAGSCOPE_SDK_COREGRAPHICS_H
#define LAGSCOPE_SDK_COREGRAPHICS_H

#include <CoreFoundation/CoreFoundation.h>

/* Geometry (CGBase.h, CGGeometry.h, CGAffineTransform.h). CGFloat is double on 64-bit. */
#if defined(__LP64__) && __LP64__
typedef double CGFloat;
#else
typedef float CGFloat;
#endif
struct CGPoint { CGFloat x; CGFloat y; };
typedef struct CGPoint CGPoint;
struct CGSize { CGFloat width; CGFloat height; };
typedef struct CGSize CGSize;
struct CGRect { CGPoint origin; CGSize size; };
typedef struct CGRect CGRect;
struct CGAffineTransform { CGFloat a, b, c, d, tx, ty; };
typedef struct CGAffineTransform CGAffineTransform;

/* Opaque objects. */
typedef struct CGContext *CGContextRef;
typedef struct CGColorSpace *CGColorSpaceRef;
typedef struct CGImage *CGImageRef;
typedef const struct CGPath *CGPathRef;
typedef struct CGDataProvider *CGDataProviderRef;

/* Bitmap layout (CGImage.h). */
typedef uint32_t CGBitmapInfo;
typedef uint32_t CGImageAlphaInfo;
enum { kCGImageAlphaPremultipliedFirst = 2 };
enum { kCGBitmapByteOrder32Little = 2 << 12, kCGBitmapByteOrder32Big = 4 << 12 };
#if defined(__BIG_ENDIAN__)
#define kCGBitmapByteOrder32Host kCGBitmapByteOrder32Big
#else
#define kCGBitmapByteOrder32Host kCGBitmapByteOrder32Little
#endif
typedef int32_t CGColorRenderingIntent;
enum { kCGRenderingIntentDefault = 0 };

/* Stroke style (CGPath.h). */
typedef int32_t CGLineJoin;
enum { kCGLineJoinMiter = 0, kCGLineJoinRound = 1, kCGLineJoinBevel = 2 };
typedef int32_t CGLineCap;
enum { kCGLineCapButt = 0, kCGLineCapRound = 1, kCGLineCapSquare = 2 };

/* Colour spaces. */
CGColorSpaceRef CGColorSpaceCreateDeviceRGB(void);
void CGColorSpaceRelease(CGColorSpaceRef space);

/* Bitmap contexts. */
CGContextRef CGBitmapContextCreate(void *data, size_t width, size_t height,
                                   size_t bitsPerComponent, size_t bytesPerRow,
                                   CGColorSpaceRef space, uint32_t bitmapInfo);
void CGContextRelease(CGContextRef c);
void CGContextFlush(CGContextRef c);

/* Graphics state and transforms. */
void CGContextSaveGState(CGContextRef c);
void CGContextRestoreGState(CGContextRef c);
void CGContextTranslateCTM(CGContextRef c, CGFloat tx, CGFloat ty);
void CGContextScaleCTM(CGContextRef c, CGFloat sx, CGFloat sy);
void CGContextSetRGBFillColor(CGContextRef c, CGFloat red, CGFloat green, CGFloat blue,
                              CGFloat alpha);
void CGContextSetRGBStrokeColor(CGContextRef c, CGFloat red, CGFloat green, CGFloat blue,
                                CGFloat alpha);
void CGContextSetLineWidth(CGContextRef c, CGFloat width);
void CGContextSetLineJoin(CGContextRef c, CGLineJoin join);
void CGContextSetLineCap(CGContextRef c, CGLineCap cap);
void CGContextClipToRect(CGContextRef c, CGRect rect);

/* Painting. */
void CGContextFillRect(CGContextRef c, CGRect rect);
void CGContextStrokeRectWithWidth(CGContextRef c, CGRect rect, CGFloat width);
void CGContextBeginPath(CGContextRef c);
void CGContextMoveToPoint(CGContextRef c, CGFloat x, CGFloat y);
void CGContextAddLineToPoint(CGContextRef c, CGFloat x, CGFloat y);
void CGContextAddPath(CGContextRef c, CGPathRef path);
void CGContextFillPath(CGContextRef c);
void CGContextStrokePath(CGContextRef c);

/* Paths. */
CGPathRef CGPathCreateWithRoundedRect(CGRect rect, CGFloat cornerWidth, CGFloat cornerHeight,
                                      const CGAffineTransform *transform);
void CGPathRelease(CGPathRef path);

/* Text placement, for Core Text. */
void CGContextSetTextMatrix(CGContextRef c, CGAffineTransform t);
void CGContextSetTextPosition(CGContextRef c, CGFloat x, CGFloat y);

/* Images. */
CGDataProviderRef CGDataProviderCreateWithCFData(CFDataRef data);
void CGDataProviderRelease(CGDataProviderRef provider);
CGImageRef CGImageCreate(size_t width, size_t height, size_t bitsPerComponent,
                         size_t bitsPerPixel, size_t bytesPerRow, CGColorSpaceRef space,
                         CGBitmapInfo bitmapInfo, CGDataProviderRef provider,
                         const CGFloat *decode, bool shouldInterpolate,
                         CGColorRenderingIntent intent);
void CGImageRelease(CGImageRef image);

/* Window levels (CGWindowLevel.h): macOS only. */
#if !defined(__ENVIRONMENT_IPHONE_OS_VERSION_MIN_REQUIRED__)
typedef int32_t CGWindowLevel;
typedef int32_t CGWindowLevelKey;
enum { kCGStatusWindowLevelKey = 9 };
CGWindowLevel CGWindowLevelForKey(CGWindowLevelKey key);
#define kCGStatusWindowLevel CGWindowLevelForKey(kCGStatusWindowLevelKey)
#endif

#endif
