// The two files CMake generates for the library, made for Package.swift by the same CMake
// scripts (so the package and the CMake build cannot differ): the viewer's files compiled in
// (web/embed-assets.cmake over assets/) and the table of consumers the core plugs in
// (cmake/consumers.cmake, with Darwin's overlay). Needs cmake on the PATH, as the
// xcframework's build does.
import Foundation
import PackagePlugin

@main
struct LagscopeGenerated: BuildToolPlugin {
  func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
    let cmake = try context.tool(named: "cmake").path
    let root = context.package.directory
    let out = context.pluginWorkDirectory
    let assetsDir = root.appending("assets")
    let assets = try FileManager.default.contentsOfDirectory(atPath: assetsDir.string)
      .filter { !$0.hasPrefix(".") }.sorted().map { assetsDir.appending($0) }
    let embed = root.appending("web", "embed-assets.cmake")
    let consumers = root.appending("cmake", "consumers.cmake")
    let assetsC = out.appending("lagscope_assets.c")
    let consumersC = out.appending("lagscope_consumers.c")
    return [
      .buildCommand(
        displayName: "Compiling the viewer's files into lagscope",
        executable: cmake,
        arguments: ["-DOUTPUT=\(assetsC.string)", "-DASSETS_DIR=\(assetsDir.string)",
                    "-P", embed.string],
        inputFiles: assets + [embed, root.appending("web", "asset-files.cmake")],
        outputFiles: [assetsC]),
      .buildCommand(
        displayName: "The consumers lagscope plugs in",
        executable: cmake,
        arguments: ["-DOUTPUT=\(consumersC.string)", "-DFOR_APPLE=ON", "-P", consumers.string],
        inputFiles: [consumers],
        outputFiles: [consumersC]),
    ]
  }
}
