#!/usr/bin/env bash
# vector_add at small sizes, no benchmark: `bazel test :vector_add_smoke`.
exec "$1" --sizes=1,1000,1048579 --bench-n=0
