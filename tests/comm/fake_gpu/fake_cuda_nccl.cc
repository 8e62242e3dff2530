// A stand-in for libcudart and libnccl (one rank, host memory as "device" memory), so that
// the NCCL backend's own code -- dlopen and symbol binding, device staging, error checks,
// the mean -- runs on machines without a GPU.  It is strict where the real libraries are:
// NCCL and device-side copies reject pointers that did not come from cudaMalloc, so a
// backend that forgot to stage host buffers fails here as it would on a GPU.
// Loaded through PLACETO_CUDART_LIBRARY / PLACETO_NCCL_LIBRARY (CTest comm_fake_gpu).
// FAKE_NCCL_FAIL=1 makes ncclAllReduce fail, to test the error path.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace {

std::mutex mutex;
std::map<const char*, size_t> allocations;  // fake device memory: start -> bytes
int current_device = 0;
constexpr char kIdMagic[] = "fake-nccl-unique-id";

// True when [p, p + bytes) lies inside one fake device allocation.
bool on_device(const void* p, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  const char* c = static_cast<const char*>(p);
  auto it = allocations.upper_bound(c);
  if (it == allocations.begin()) return false;
  --it;
  return c >= it->first && c + bytes <= it->first + it->second;
}

int device_count() {
  const char* env = std::getenv("FAKE_CUDA_DEVICE_COUNT");
  return env != nullptr ? std::atoi(env) : 1;
}

size_t nccl_type_size(int type) {
  switch (type) {
    case 0:
    case 1:
      return 1;
    case 7:
      return 4;
    case 8:
      return 8;
    default:
      return 0;
  }
}

struct FakeComm {
  int ranks;
};

}  // namespace

extern "C" {

// ---- CUDA runtime (error codes as in driver_types.h) ----
int cudaGetDeviceCount(int* count) {
  *count = device_count();
  return *count > 0 ? 0 : 100;  // cudaErrorNoDevice
}
int cudaSetDevice(int device) {
  if (device < 0 || device >= device_count()) return 101;  // cudaErrorInvalidDevice
  current_device = device;
  return 0;
}
int cudaDeviceGetPCIBusId(char* out, int length, int device) {
  if (device < 0 || device >= device_count()) return 101;
  std::snprintf(out, static_cast<size_t>(length), "0000:%02x:00.0", 0x10 + device);
  return 0;
}
int cudaMalloc(void** p, size_t bytes) {
  *p = std::malloc(bytes);
  if (*p == nullptr) return 2;  // cudaErrorMemoryAllocation
  std::lock_guard<std::mutex> lock(mutex);
  allocations[static_cast<const char*>(*p)] = bytes;
  return 0;
}
int cudaFree(void* p) {
  std::lock_guard<std::mutex> lock(mutex);
  if (allocations.erase(static_cast<const char*>(p)) != 1) return 1;  // cudaErrorInvalidValue
  std::free(p);
  return 0;
}
int cudaMemcpyAsync(void* dst, const void* src, size_t bytes, int kind, void*) {
  const bool ok = (kind == 1 && on_device(dst, bytes) && !on_device(src, bytes)) ||
                  (kind == 2 && on_device(src, bytes) && !on_device(dst, bytes));
  if (!ok) return 1;
  std::memcpy(dst, src, bytes);
  return 0;
}
int cudaStreamCreate(void** stream) {
  *stream = new int(0);
  return 0;
}
int cudaStreamSynchronize(void* stream) { return stream != nullptr ? 0 : 400; }
int cudaStreamDestroy(void* stream) {
  delete static_cast<int*>(stream);
  return 0;
}
const char* cudaGetErrorString(int error) {
  switch (error) {
    case 0:
      return "no error";
    case 1:
      return "fake: invalid argument (host pointer where a device pointer belongs?)";
    case 100:
      return "fake: no CUDA-capable device is detected";
    default:
      return "fake: CUDA error";
  }
}

// ---- NCCL (one rank) ----
int ncclGetUniqueId(char* id) {
  std::memset(id, 0, 128);
  std::memcpy(id, kIdMagic, sizeof(kIdMagic));
  return 0;
}
struct FakeUniqueId {
  char internal[128];
};
int ncclCommInitRank(FakeComm** comm, int ranks, FakeUniqueId id, int rank) {
  if (std::memcmp(id.internal, kIdMagic, sizeof(kIdMagic)) != 0) return 4;  // invalid argument
  if (ranks != 1 || rank != 0) return 5;  // the fake serves one rank only
  *comm = new FakeComm{ranks};
  return 0;
}
int ncclAllReduce(const void* send, void* recv, size_t count, int type, int op, FakeComm* comm,
                  void*) {
  const char* fail = std::getenv("FAKE_NCCL_FAIL");
  if (fail != nullptr && std::strcmp(fail, "1") == 0) return 2;
  const size_t bytes = count * nccl_type_size(type);
  if (comm == nullptr || op != 0 || bytes == 0) return 4;
  if (!on_device(send, bytes) || !on_device(recv, bytes)) return 4;
  std::memmove(recv, send, bytes);  // the sum over one rank
  return 0;
}
int ncclBroadcast(const void* send, void* recv, size_t count, int type, int root, FakeComm* comm,
                  void*) {
  const size_t bytes = count * nccl_type_size(type);
  if (comm == nullptr || root != 0 || bytes == 0) return 4;
  if (!on_device(send, bytes) || !on_device(recv, bytes)) return 4;
  std::memmove(recv, send, bytes);
  return 0;
}
int ncclCommDestroy(FakeComm* comm) {
  delete comm;
  return 0;
}
int ncclCommAbort(FakeComm* comm) {
  delete comm;
  return 0;
}
const char* ncclGetErrorString(int result) {
  switch (result) {
    case 2:
      return "fake: system error";
    case 4:
      return "fake: invalid argument";
    case 5:
      return "fake: invalid usage (the fake NCCL serves one rank)";
    default:
      return "fake: NCCL error";
  }
}

}  // extern "C"
