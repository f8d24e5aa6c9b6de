// The value types of Kiln's generated launchers: the launch grid and the
// floating-point storage types that kernel pointers may point to.

#ifndef KILN_TYPES_H_
#define KILN_TYPES_H_

#include "kiln/cuda_stream.h"  // IWYU pragma: export
#include "kiln/float_types.h"  // IWYU pragma: export
#include "kiln/grid.h"         // IWYU pragma: export

#endif  // KILN_TYPES_H_
