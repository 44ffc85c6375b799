// Three launches that run, then one that fails (a write through a null pointer: an illegal
// address), so ncu's output holds measured launches followed by the failure.
// Record: nvcc -o launch_fails launch_fails.cu && ncu ./launch_fails > launch_fails.log 2>&1
#include <cstdio>

__global__ void scale(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= 2.0f;
}

__global__ void write_through(float* p) { p[threadIdx.x] = 1.0f; }

int main() {
    const int n = 1 << 20;
    float* x = nullptr;
    cudaMalloc(&x, n * sizeof(float));
    for (int i = 0; i < 3; ++i) scale<<<n / 256, 256>>>(x, n);
    cudaDeviceSynchronize();
    write_through<<<1, 32>>>(nullptr);
    cudaError_t e = cudaDeviceSynchronize();
    std::printf("write_through: %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
