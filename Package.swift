// swift-tools-version:5.9
// lagscope as a Swift package: Xcode's "Add Package Dependency" (docs/apple.md, "Swift package").
//
// One C target over the project's own sources, as cmake/apple.cmake builds them for Apple.
// cJSON and civetweb carry no Package.swift at their pinned tags (v1.7.18, v1.16) nor at any
// other, so they cannot be package dependencies; copying their sources here is ruled out. They
// are system-library targets found by pkg-config (Homebrew's cjson and civetweb), which exist
// for the Mac only: this package builds lagscope for macOS. iOS apps take the xcframework
// (apple/lagscope-debug.xcconfig or lagscope.podspec); docs/apple.md says why and how.
// The two files CMake generates (the viewer's files, the consumer table) come from the same
// CMake scripts through a build-tool plugin. tests/builds/darwin/check-manifests checks this
// file's structure; no Swift toolchain runs it there.
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
    .plugin(
      name: "LagscopeGenerated", capability: .buildTool(), path: "apple/swiftpm/LagscopeGenerated"),
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
        "web",
      ],
      publicHeadersPath: "apple/swiftpm/include",
      cSettings: [
        .headerSearchPath("core"), .headerSearchPath("hud"), .headerSearchPath("web"),
      ],
      linkerSettings: [
        .linkedLibrary("objc"),
        .linkedFramework("CoreFoundation"), .linkedFramework("CoreGraphics"),
        .linkedFramework("CoreText"), .linkedFramework("QuartzCore"),
        .linkedFramework("AppKit"),
      ],
      plugins: ["LagscopeGenerated"]),
  ]
)
