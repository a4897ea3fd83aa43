// The CPU check, in C and outside bw_json.cpp's AVX2 region, so that it runs on any x86-64.
int bw_cpu_supported(void);

int bw_cpu_supported(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") && __builtin_cpu_supports("pclmul");
#else
    return 1;
#endif
}
