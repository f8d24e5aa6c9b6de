#!/bin/sh
echo "kiln: bazel coverage is not supported offline (third_party/coverage_stub)" >&2
exit 1
