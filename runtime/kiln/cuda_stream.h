// CUstream without the CUDA headers.
//
// Kiln's public headers name CUDA streams but must not require cuda.h. This
// declares `CUstream` exactly as cuda.h does, so a translation unit may include
// both in either order and the types agree.

#ifndef KILN_CUDA_STREAM_H_
#define KILN_CUDA_STREAM_H_

// The opaque stream object of the CUDA driver API.
struct CUstream_st;

// A CUDA driver API stream handle; null is the legacy default stream.
typedef struct CUstream_st* CUstream;  // NOLINT(modernize-use-using): as cuda.h

#endif  // KILN_CUDA_STREAM_H_
