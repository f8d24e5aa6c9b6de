"""@rules_cc//cc:defs.bzl for Bazel 4.2.3, which has the C++ rules built in.

Debian's rules_cc needs Bazel features newer than 4.2.3 (`use_cpp_toolchain`),
so the WORKSPACE maps @rules_cc here and every BUILD file loads its cc rules
from "@rules_cc//cc:defs.bzl". On Bazel 7+ with Bzlmod, MODULE.bazel brings the
real rules_cc instead and the same BUILD files load unchanged.
"""

def _native_rule(name):
    # getattr keeps this file loadable where a rule has left `native`.
    return getattr(native, name, None)

cc_library = _native_rule("cc_library")
cc_binary = _native_rule("cc_binary")
cc_test = _native_rule("cc_test")
cc_import = _native_rule("cc_import")
cc_toolchain = _native_rule("cc_toolchain")
cc_toolchain_suite = _native_rule("cc_toolchain_suite")
cc_proto_library = _native_rule("cc_proto_library")
objc_library = _native_rule("objc_library")
objc_import = _native_rule("objc_import")
