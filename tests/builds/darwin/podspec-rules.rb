# The rules CocoaPods' own linter applies to a podspec (CocoaPods/Core 1.17:
# lib/cocoapods-core/specification/linter.rb, linter/analyzer.rb and the attribute table in
# specification/dsl.rb), checked here against lagscope.podspec without CocoaPods: the podspec is
# evaluated against a stand-in for Pod::Spec that records what it sets, then each rule that
# `pod lib lint` reports as an error or a warning (lint fails on both) is checked. Written from
# reading those files; no code of theirs. Where `pod` is installed (a Mac), check-manifests runs
# `pod spec lint --quick` as well.
# Usage: ruby podspec-rules.rb PODSPEC   prints one line per broken rule, exits 1 if any.

module Pod
  # Every attribute the podspec may set, as dsl.rb declares them (root and platform ones).
  KNOWN = %w[name version summary description homepage source authors license platform
             deployment_target vendored_frameworks vendored_libraries libraries frameworks
             weak_frameworks source_files public_header_files user_target_xcconfig
             pod_target_xcconfig requires_arc module_name swift_versions resources].freeze
  class Attrs
    def initialize(h, prefix) @h, @p = h, prefix end
    def method_missing(name, *args)
      key = name.to_s.chomp('=')
      return Attrs.new(@h, key + '.') if %w[ios osx tvos watchos visionos].include?(key) && args.empty?
      raise NoMethodError, "unknown attribute `#{key}`" unless name.to_s.end_with?('=') && KNOWN.include?(key)
      @h[@p + key] = args.length == 1 ? args[0] : args
    end
    def respond_to_missing?(*) true end
    def version() @h['version'] end
  end
  class Spec
    @@last = nil
    def self.last; @@last end
    def initialize; @h = {}; yield Attrs.new(@h, ''); @@last = @h end
  end
end

path = ARGV[0]
load path
h = Pod::Spec.last
errors = []
fail_rule = ->(attr, text) { errors << "#{attr}: #{text}" }
blank = ->(v) { v.nil? || (v.respond_to?(:empty?) && v.empty?) }

# linter.rb, check_required_attributes: name, version, summary, homepage, source, authors
# (errors), license (a warning).
%w[name version summary homepage source authors license].each do |a|
  fail_rule.call(a, 'missing required attribute') if blank.call(h[a])
end
name = h['name'].to_s
# validate_root_name: the file is NAME.podspec or NAME.podspec.json.
fail_rule.call('name', 'does not match the file name') unless
  [name + '.podspec', name + '.podspec.json'].include?(File.basename(path))
# _validate_name: no slash, no whitespace, not starting with a period.
fail_rule.call('name', 'contains a slash, whitespace or begins with a period') if name =~ %r{/|\s|\A\.}
# _validate_version, and Pod::Version's form (semantic versioning).
fail_rule.call('version', 'is not a version') unless h['version'].to_s =~ /\A\d+(\.\d+)*(-[0-9A-Za-z.-]+)?\z/
# _validate_summary: at most 140 characters, not the template's.
summary = h['summary'].to_s
fail_rule.call('summary', 'longer than 140 characters') if summary.length > 140
fail_rule.call('summary', 'is the template') if summary =~ /A short description of/
# _validate_description: not empty, not the summary, not shorter than it.
if (d = h['description'])
  fail_rule.call('description', 'is empty, the summary, or shorter than it') if
    d.strip.empty? || d == summary || d.length < summary.length
end
# _validate_homepage, and the validator's reachability (an address pod lib lint can fetch).
homepage = h['homepage'].to_s
fail_rule.call('homepage', 'is the template') if homepage =~ %r{http://EXAMPLE}i
fail_rule.call('homepage', "#{homepage} is not an http(s) address pod lib lint can reach") unless
  homepage =~ %r{\Ahttps?://[^/]+\.[a-z]{2,}(/|\z)}i && homepage !~ /\.(invalid|example|test|localhost)(\/|\z)/i
# analyzer.rb, validate_attribute_hash_keys with dsl.rb's SOURCE_KEYS: one primary key and only
# its own keys ("Missing primary key for `source`": a :path source is one).
source_keys = { git: %i[tag branch commit submodules], svn: %i[folder tag revision],
                hg: %i[revision], http: %i[flatten type sha256 sha1 headers] }
source = h['source']
if source.is_a?(Hash)
  primary = source.keys & source_keys.keys
  if primary.length != 1
    fail_rule.call('source', "needs one primary key of #{source_keys.keys.join(', ')}, has #{source.keys.inspect}")
  else
    extra = source.keys - primary - source_keys[primary[0]]
    fail_rule.call('source', "keys #{extra.inspect} do not go with #{primary[0]}") unless extra.empty?
  end
  # _validate_source for git: not the template, a tag (not HEAD), holding the version; no SSH.
  if (git = source[:git])
    fail_rule.call('source', 'git is the template') if git =~ %r{http://EXAMPLE}i
    fail_rule.call('source', 'git has no tag') if source[:tag].nil?
    fail_rule.call('source', 'the tag does not hold the version') unless source[:tag].to_s.include?(h['version'].to_s)
    fail_rule.call('source', 'commit is HEAD') if source[:commit].to_s =~ /head/i
    fail_rule.call('source', 'git over SSH') if git =~ /\A[^@\/]+@/ || git.start_with?('ssh://')
  end
elsif !source.nil?
  fail_rule.call('source', "is a #{source.class}, not a Hash")
end
# _validate_authors: not the template.
fail_rule.call('authors', 'are the template') if h['authors'] == { 'YOUR NAME HERE' => 'YOUR EMAIL HERE' }
# _validate_license: a type, not blank, not the sample; a file of .txt, .md, .markdown or none.
license = h['license'].is_a?(Hash) ? h['license'] : { type: h['license'] }
type = license[:type].to_s
fail_rule.call('license', 'has no type') if type.delete(" \n").empty?
fail_rule.call('license', 'is the sample') if type =~ /\(example\)/
fail_rule.call('license', 'file of another type') if license[:file] && File.extname(license[:file].to_s) !~ /\A(\.(txt|md|markdown))?\z/i
# _validate_frameworks (also per platform): names only, [\w+-].
h.select { |k, _| k.end_with?('frameworks') && !k.include?('vendored') }.each do |k, v|
  fail_rule.call(k, 'a framework by its name only') if Array(v).any? { |f| f =~ /[^\w\-+]/ }
end
# _validate_libraries: no extension, no lib prefix, no commas.
h.select { |k, _| k.end_with?('libraries') && !k.include?('vendored') }.each do |k, v|
  fail_rule.call(k, 'a library by its bare name') if
    Array(v).any? { |l| l.downcase.end_with?('.a', '.dylib') || l.downcase.start_with?('lib') || l.include?(',') }
end
# analyzer.rb, validate_file_patterns and check_if_spec_is_empty.
patterns = %w[vendored_frameworks vendored_libraries source_files resources].flat_map { |a| Array(h[a]) }
fail_rule.call('file patterns', 'absolute') if patterns.any? { |p| p.start_with?('/') }
fail_rule.call('file patterns', 'the spec is empty') if patterns.empty?

if errors.empty?
  puts "podspec: CocoaPods' linter rules hold (#{h.length} attributes; source #{source.keys.first} at #{source[:tag]})"
else
  errors.each { |e| puts "FAIL: podspec #{e}" }
  exit 1
end
