// The launch grid of a Triton kernel and the ceiling division used to size it.

#ifndef KILN_GRID_H_
#define KILN_GRID_H_

#include <cstdint>

namespace kiln {

// The number of programs to launch along each axis, like the grid tuple of a
// Triton launch: `tl.program_id(axis)` ranges over [0, grid.axis). Each
// program is one CUDA thread block. A grid with a zero extent launches nothing.
struct Grid {
  // A grid of one program.
  constexpr Grid() : Grid(1, 1, 1) {}
  // A one-dimensional grid of `x` programs.
  constexpr explicit Grid(uint32_t x) : Grid(x, 1, 1) {}
  // A two- or three-dimensional grid.
  constexpr Grid(uint32_t x, uint32_t y, uint32_t z = 1) : x(x), y(y), z(z) {}

  // Total number of programs.
  constexpr uint64_t size() const { return uint64_t{x} * y * z; }

  uint32_t x;
  uint32_t y;
  uint32_t z;
};

// Returns `a / b` rounded up, as Triton's `triton.cdiv`: the number of
// programs of `b` elements that cover `a` elements. Requires a >= 0, b > 0.
constexpr int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace kiln

#endif  // KILN_GRID_H_
