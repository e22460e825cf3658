# CocoaPods, for Debug builds only, from a checkout on the Mac (docs/apple.md, "CocoaPods"):
#   scripts/make-xcframework                    # makes build-apple/lagscope.xcframework
#   pod 'lagscope', :path => '../lagscope', :configurations => ['Debug']   # in the Podfile
# A local (:path) pod: neither cJSON nor civetweb publishes a podspec or a Swift package, so
# the pod vends the xcframework built from this checkout, which holds them both.
Pod::Spec.new do |s|
  s.name = 'lagscope'
  s.version = '0.1.0'
  s.summary = 'Why the main thread stalls: hang reports, a HUD and a LAN viewer, for debug builds.'
  s.license = { :type => 'UNLICENSED', :text => 'Not for distribution.' }
  s.authors = { 'lagscope' => 'lagscope' }
  s.homepage = 'https://lagscope.invalid/' # a :path pod is never fetched from it
  s.source = { :path => '.' }
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
