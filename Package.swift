// swift-tools-version:5.9
// lagscope as a Swift package: Xcode's "Add Package Dependency" (docs/apple.md, "Swift package").
//
// One C target over the project's own sources, as cmake/apple.cmake builds them for Apple.
// cJSON and civetweb carry no Package.swift at their pinned tags (v1.7.18, v1.16) nor at any
// other, so they cannot be package dependencies; copying their sources here is ruled out. They
// are system-library targets found by pkg-config (Homebrew's cjson and civetweb), which exist
// for the Mac only: this package builds lagscope for macOS. iOS apps take the xcframework
// (apple/lagscope-debug.xcconfig or lagscope.podspec); docs/apple.md says why and how.
// The two files CMake generates (the viewer's files, the consumer table) are committed in
// apple/swiftpm/generated, made by scripts/swiftpm-generated with the CMake build's own
// scripts; no plugin: SwiftPM's PluginContext.tool(named:) looks only in the toolchain's
// folder, so a plugin never finds cmake, and SwiftPM drops plugin-generated .c files ("Only
// Swift is supported for generated plugin source files"). tests/builds/darwin/check-manifests
// checks this file's structure, that it has no plugin, and that the committed files are what
// the scripts make now; no Swift toolchain runs it there.
import PackageDescription

let package = Package(
  name: "lagscope",
  platforms: [.macOS("11.0")],
  products: [
    .library(name: "lagscope", targets: ["lagscope"]),
  ],
  targets: [
    .systemLibrary(
      name: "CcJSON", path: "apple/swiftpm/CcJSON", pkgConfig: "libcjson",
      providers: [.brew(["cjson"])]),
    .systemLibrary(
      name: "Ccivetweb", path: "apple/swiftpm/Ccivetweb", pkgConfig: "civetweb",
      providers: [.brew(["civetweb"])]),
    .target(
      name: "lagscope",
      dependencies: ["CcJSON", "Ccivetweb"],
      path: ".",
      exclude: ["web/embed-assets.cmake", "web/asset-files.cmake"],
      sources: [
        "core/lifecycle.c", "core/monitor.c", "core/autostart.c", "core/net.c",
        "core/base", "core/detect", "core/stack", "core/cause", "core/report", "core/deliver",
        "core/darwin",
        "hud/layout.c", "hud/renderer.c", "hud/consumer.c", "hud/coregraphics_canvas.c",
        "hud/darwin",
        "web", "apple/swiftpm/generated",
      ],
      publicHeadersPath: "apple/swiftpm/include",
      cSettings: [
        .headerSearchPath("core"), .headerSearchPath("hud"), .headerSearchPath("web"),
        // core/darwin/autostart.c starts lagscope by itself only where DEBUG is defined
        // (SWIFT_PACKAGE && !DEBUG: a Release build stays still)
        .define("DEBUG", to: "1", .when(configuration: .debug)),
      ],
      linkerSettings: [
        .linkedLibrary("objc"),
        .linkedFramework("CoreFoundation"), .linkedFramework("CoreGraphics"),
        .linkedFramework("CoreText"), .linkedFramework("QuartzCore"),
        .linkedFramework("AppKit"),
      ]),
  ]
)
