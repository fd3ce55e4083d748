// File I/O shared by the host harnesses in tests/cuda_host/ (host code: not a kernel header, never in kernel_src).
// The pytest side writes raw little-endian arrays with ndarray.tofile and reads results with np.fromfile.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// Every value in the file (an empty file gives an empty vector). Exits with status 2 if it cannot be read.
template <typename T> inline std::vector<T> read_file(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) { std::fprintf(stderr, "cannot open %s\n", path.c_str()); std::exit(2); }
    std::fseek(f, 0, SEEK_END);
    const long bytes = std::ftell(f);
    std::fseek(f, 0, SEEK_SET);
    std::vector<T> v((size_t)(bytes > 0 ? bytes : 0) / sizeof(T));
    if (!v.empty() && std::fread(v.data(), sizeof(T), v.size(), f) != v.size()) {
        std::fprintf(stderr, "cannot read %s\n", path.c_str());
        std::exit(2);
    }
    std::fclose(f);
    return v;
}

// The first n values; a file with fewer is an error (exit status 2).
template <typename T> inline std::vector<T> read_file(const std::string& path, long long n) {
    std::vector<T> v = read_file<T>(path);
    if ((long long)v.size() < n) {
        std::fprintf(stderr, "%s holds %zu values, expected %lld\n", path.c_str(), v.size(), n);
        std::exit(2);
    }
    v.resize((size_t)n);
    return v;
}

template <typename T> inline void write_file(const std::string& path, const std::vector<T>& v) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || (!v.empty() && std::fwrite(v.data(), sizeof(T), v.size(), f) != v.size())) {
        std::fprintf(stderr, "cannot write %s\n", path.c_str());
        std::exit(2);
    }
    std::fclose(f);
}
