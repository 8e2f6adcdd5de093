# Homebrew formula for rig, built from the release tarball that `make dist`
# writes (build/rig-VERSION.tar.gz, the committed tree).
#
# RELEASE: before publishing, replace the two lines marked RELEASE below:
# `url` with the address the tarball is published at (a file:///...tar.gz
# address serves for trying the formula on one Mac), `sha256` with the sum
# `make dist` prints ("dist: sha256 ..."). Until then they are placeholders
# and brew refuses the download (the sum cannot match).
#
# Homebrew (4.6 and later) installs formulae from taps only, not from a file
# path; a local tap serves:
#
#   brew tap-new --no-git local/rig
#   cp packaging/homebrew/rig.rb "$(brew --repository local/rig)/Formula/"
#   brew install --build-from-source local/rig/rig
#
# The dependencies are those ./setup installs on macOS, without cunit (the
# tests') and pkg-config only for building. Homebrew puts their pkg-config
# folders (keg-only sqlite, libpq and openssl@3 among them) on PKG_CONFIG_PATH.
class Rig < Formula
  desc "Storage experiments from a YAML plan: provision, measure, report"
  homepage "https://example.invalid/rig" # RELEASE: the project's page
  url "https://example.invalid/rig/rig-0.1.0.tar.gz" # RELEASE: the tarball's address
  sha256 "0000000000000000000000000000000000000000000000000000000000000000" # RELEASE: make dist's sha256
  # No license yet: the source tree states none (packaging/deb/copyright).

  depends_on "pkg-config" => :build
  depends_on "cairo"
  depends_on "json-c"
  depends_on "libplist"
  depends_on "libpng"
  depends_on "libpq"
  depends_on "libyaml"
  depends_on "openssl@3"
  depends_on "sqlite"

  def install
    # The binary, the configs (share/rig/configs), the man page, and the
    # completions where Homebrew's bash-completion and zsh look.
    system "make", "install", "PREFIX=#{prefix}",
           "BASH_COMPLETION_DIR=#{bash_completion}",
           "ZSH_COMPLETION_DIR=#{zsh_completion}"
  end

  test do
    assert_match "rig #{version}", shell_output("#{bin}/rig --version")
    system bin/"rig", "validate", pkgshare/"configs/quick.yaml"
    assert_path_exists bash_completion/"rig"
    assert_path_exists zsh_completion/"_rig"
  end
end
