# Package.swift's structure, checked without a Swift toolchain (issue 33, item 11): the manifest
# is read as text, and what it names must exist and agree with the CMake build for Apple.
# - every target's path, sources, excludes and header paths exist;
# - the C files it compiles are exactly the Apple library's (as tests/builds/darwin/check lists
#   them: the portable core but core/disabled.c, core/darwin, the HUD but cairo's canvas,
#   hud/darwin, the viewer);
# - the system-library targets have module maps whose module is the target's name and whose
#   headers exist; their pkg-config names are the ones upstream installs (cJSON's libcjson.pc,
#   civetweb's civetweb.pc);
# - the frameworks are cmake/apple.cmake's with AppKit, and objc;
# - the public module map names core/lagscope.h;
# - no plugin (issue 46: SwiftPM finds no cmake for one and drops its .c files): the two files
#   CMake generates are committed in apple/swiftpm/generated and compiled as sources;
# - no third-party source is in the tree.
# Usage: ruby package-structure.rb SOURCE-DIR "FRAMEWORKS"   (one line per fault, exit 1 if any)
src, frameworks = ARGV
GENERATED = %w[apple/swiftpm/generated/lagscope_assets.c apple/swiftpm/generated/lagscope_consumers.c]
text = File.read(File.join(src, 'Package.swift'))
faults = []
fault = ->(s) { faults << s }
exists = ->(rel) { File.exist?(File.join(src, rel)) }
strings = ->(s) { s.to_s.scan(/"([^"]*)"/).flatten }

fault.call('no swift-tools-version 5.9 or later') unless text =~ %r{\A// swift-tools-version:\s*(5\.(9|\d\d)|6\.\d)}
# The C target: its arguments up to plugins:.
target = text[/\.target\(\s*name:\s*"lagscope".*?linkerSettings:.*?\]\)/m] or (fault.call('no .target named lagscope') && '')
path = target[/path:\s*"([^"]*)"/, 1]
sources = strings.call(target[/sources:\s*\[(.*?)\]/m, 1])
excludes = strings.call(target[/exclude:\s*\[(.*?)\]/m, 1])
public_headers = target[/publicHeadersPath:\s*"([^"]*)"/, 1]
header_paths = target.scan(/headerSearchPath\("([^"]*)"\)/).flatten
fault.call('the C target has no path "."') unless path == '.'
(sources + excludes + header_paths + [public_headers]).each do |rel|
  fault.call("names #{rel.inspect}, which does not exist") unless rel && exists.call(rel)
end

# The C files: the manifest's against the Apple library's.
expand = lambda do |rel|
  full = File.join(src, rel)
  File.directory?(full) ? Dir.glob(File.join(full, '**', '*.c')).map { |f| f.delete_prefix(src + '/') } : [rel]
end
selected = (sources.flat_map { |s| expand.call(s) } - excludes).sort
stages = %w[base detect stack cause report deliver]
apple = (Dir.glob(File.join(src, 'core', '*.c')).reject { |f| File.basename(f) == 'disabled.c' } +
         stages.flat_map { |d| Dir.glob(File.join(src, 'core', d, '*.c')) } +
         Dir.glob(File.join(src, 'core', 'darwin', '*.c')) +
         Dir.glob(File.join(src, 'hud', '*.c')).reject { |f| File.basename(f).start_with?('cairo_') } +
         Dir.glob(File.join(src, 'hud', 'darwin', '*.c')) +
         Dir.glob(File.join(src, 'web', '*.c'))).map { |f| f.delete_prefix(src + '/') } +
        GENERATED
apple = apple.sort
fault.call("compiles what the Apple library does not: #{selected - apple}") unless (selected - apple).empty?
fault.call("leaves out what the Apple library has: #{apple - selected}") unless (apple - selected).empty?

# The system libraries: module maps and pkg-config names.
want_pc = { 'CcJSON' => 'libcjson', 'Ccivetweb' => 'civetweb' }
text.scan(/\.systemLibrary\(\s*name:\s*"([^"]+)",\s*path:\s*"([^"]+)",\s*pkgConfig:\s*"([^"]+)"/m).each do |name, dir, pc|
  want_pc.delete(name) == pc or fault.call("#{name}: pkg-config #{pc.inspect} is not what upstream installs")
  map = File.join(dir, 'module.modulemap')
  next fault.call("#{name}: no #{map}") unless exists.call(map)
  body = File.read(File.join(src, map))
  fault.call("#{map} names module #{body[/module\s+(\w+)/, 1]}, not #{name}") unless body[/module\s+(\w+)/, 1] == name
  body.scan(/header\s+"([^"]+)"/).flatten.each do |h|
    fault.call("#{map}: header #{h} does not exist") unless exists.call(File.join(dir, h))
  end
end
fault.call("no system-library target for #{want_pc.keys.join(', ')}") unless want_pc.empty?
public_map = File.join(src, public_headers.to_s, 'module.modulemap')
if File.exist?(public_map)
  header = File.read(public_map)[/header\s+"([^"]+)"/, 1].to_s
  fault.call("the public module map names #{header}, not core/lagscope.h") unless
    File.expand_path(header, File.dirname(public_map)) == File.join(File.expand_path(src), 'core', 'lagscope.h')
else
  fault.call('no module map in the public headers path')
end

# Frameworks and libraries, as cmake/apple.cmake links them (macOS: AppKit).
linked = target.scan(/linkedFramework\("([^"]+)"\)/).flatten.sort
fault.call("links frameworks #{linked}, not #{(frameworks.split + ['AppKit']).sort}") unless linked == (frameworks.split + ['AppKit']).sort
fault.call('does not link objc') unless target.include?('linkedLibrary("objc")')

# No plugin: the generated files are sources (their content is checked by check-manifests).
fault.call('declares a plugin (SwiftPM would find no cmake for it)') if text =~ /\.plugin\(|plugins:\s*\[/
fault.call('a plugin folder is still in the tree') unless Dir.glob(File.join(src, 'apple', 'swiftpm', '*', '*.swift')).empty?
GENERATED.each { |g| fault.call("no #{g}") unless exists.call(g) }

# No third-party code: no cJSON or civetweb source file in the repository.
tracked = `git -C "#{src}" ls-files`.split("\n")
copies = tracked.select { |f| File.basename(f) =~ /\A(cJSON(_Utils)?|civetweb|handle_form|md5|sha1)\.(c|h|inl)\z/i }
fault.call("third-party sources in the tree: #{copies}") unless copies.empty?

if faults.empty?
  puts "Package.swift: #{selected.length} C files as the Apple library, cJSON and civetweb by pkg-config, #{linked.length} frameworks, the generated files committed, no plugin"
else
  faults.each { |f| puts "FAIL: Package.swift #{f}" }
  exit 1
end
