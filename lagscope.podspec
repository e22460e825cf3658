# CocoaPods, for Debug builds only, from a checkout on the Mac (docs/apple.md, "CocoaPods"):
#   scripts/make-xcframework                    # makes build-apple/lagscope.xcframework
#   pod 'lagscope', :path => '../lagscope', :configurations => ['Debug']   # in the Podfile
# A local (:path) pod: neither cJSON nor civetweb publishes a podspec or a Swift package, so
# the pod vends the xcframework built from this checkout, which holds them both.
#
# homepage and source: CocoaPods' linter requires both, and a source with a primary key (git,
# hg, http, svn; a :path source is refused). They are the repository this checkout was cloned
# from (its "origin" remote, an SSH address turned into https), at the tag of this version; a
# checkout without a remote names itself (file://), which pod lib lint accepts but cannot
# reach as a homepage (docs/apple.md). tests/builds/darwin/check-manifests checks the rules.
origin = `git -C "#{__dir__}" config --get remote.origin.url 2>/dev/null`.strip
origin = origin.sub(/\A[^@\/]+@([^:]+):/, 'https://\1/') # git@host:owner/name.git
repository = origin.empty? ? "file://#{__dir__}" : origin

Pod::Spec.new do |s|
  s.name = 'lagscope'
  s.version = '0.1.0'
  s.summary = 'Why the main thread stalls: hang reports, a HUD and a LAN viewer, for debug builds.'
  s.description = 'lagscope watches the main thread from inside a Debug build. When it stalls, ' \
                  'it samples the stack while the stall lasts, says why (on the CPU, a lock and ' \
                  'its owner, I/O, a dispatch queue), keeps the report on disk, shows FPS and ' \
                  'hangs on a HUD, and serves it all to a browser on the LAN.'
  s.license = { :type => 'UNLICENSED', :text => 'Not for distribution.' }
  s.authors = { 'lagscope' => 'lagscope' }
  s.homepage = repository.sub(/\.git\z/, '')
  s.source = { :git => repository, :tag => "v#{s.version}" }
  s.ios.deployment_target = '15.0'
  s.osx.deployment_target = '11.0'
  s.vendored_frameworks = 'build-apple/lagscope.xcframework'
  s.libraries = 'objc'
  s.frameworks = 'CoreFoundation', 'CoreGraphics', 'CoreText', 'QuartzCore'
  s.ios.frameworks = 'UIKit'
  s.osx.frameworks = 'AppKit'
  # The auto-start: the linker takes core/darwin/autostart.c from the static library although
  # the app calls nothing of lagscope (CocoaPods writes this into the configurations that
  # include the pod only: Debug).
  s.user_target_xcconfig = { 'OTHER_LDFLAGS' => '$(inherited) -Wl,-u,_lagscope__autostart_link' }
end
