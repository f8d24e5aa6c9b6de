// The launch grid of a Triton kernel and the ceiling division used to size it.

#ifndef KILN_GRID_H_
#define KILN_GRID_H_

#include <cstdint>
#include <type_traits>

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

// The grid argument of a generated launcher for a kernel whose config type is
// `Config`: either fixed extents (a Grid) or a function of the config the
// launch runs with, as Triton's `grid = lambda meta: (cdiv(n,
// meta["BLOCK"]),)`:
//
//   kernels::launch_add_kernel(
//       [&](const kernels::add_kernel_config& c) {
//         return kiln::Grid(kiln::cdiv(n, c.BLOCK));
//       },
//       stream, x, y, out, n);
//
// It refers to the function without copying it: make one only as a launcher's
// argument, never store one.
template <typename Config>
class GridFor {
 public:
  // Fixed extents.
  GridFor(Grid grid)  // NOLINT(google-explicit-constructor): a grid is one
      : grid_(grid) {}

  // A function from `const Config&` to Grid, called once per launch.
  template <typename F,
            typename = std::enable_if_t<
                !std::is_convertible<const F&, Grid>::value &&
                std::is_convertible<decltype(std::declval<const F&>()(
                                        std::declval<const Config&>())),
                                    Grid>::value>>
  GridFor(const F& function)  // NOLINT(google-explicit-constructor)
      : function_(&function), call_(&Call<F>) {}

  // Whether the extents depend on the config (a function was given): only
  // then may a launcher pick a config other than the default by tuning.
  bool depends_on_config() const { return call_ != nullptr; }

  // The extents for a launch with `config`.
  Grid Resolve(const Config& config) const {
    return call_ == nullptr ? grid_ : call_(function_, config);
  }

 private:
  template <typename F>
  static Grid Call(const void* function, const Config& config) {
    return (*static_cast<const F*>(function))(config);
  }

  Grid grid_;
  const void* function_ = nullptr;
  Grid (*call_)(const void*, const Config&) = nullptr;
};

}  // namespace kiln

#endif  // KILN_GRID_H_
