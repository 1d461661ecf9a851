/*
 * stream_triad.c: a STREAM-style triad bandwidth test, written for Tessera's roofline accuracy
 * check (issue 7, bench/cpu_roof_accuracy.sh). Not derived from STREAM's source; it follows
 * STREAM's published rules only: arrays far larger than the last-level cache, parallel first-touch
 * initialisation with the same static partition as the timed loop, the best (and here also the
 * median) of N repetitions, and bytes counted as STREAM counts them for the triad:
 * 3 x sizeof(element) per element (two loads and one store; the write-allocate read of `a` that the
 * hardware also performs is NOT counted).
 *
 * Kernel: a[i] = b[i] + s * c[i], double by default (float with -DTRIAD_FLOAT).
 *
 * Build: cc -O3 -march=native -fopenmp bench/stream_triad.c -o stream_triad
 * Run:   OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores ./stream_triad [--mb-per-array 80] [--reps 20]
 * Prints a human-readable summary on stderr and one JSON object on stdout. Exit status 1 when the
 * arguments are bad, the allocation fails or the result check fails.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TRIAD_FLOAT
typedef float elem_t;
static const char* const kElemName = "float";
#else
typedef double elem_t;
static const char* const kElemName = "double";
#endif

static int cmp_double(const void* x, const void* y) {
    const double a = *(const double*)x, b = *(const double*)y;
    return a < b ? -1 : a > b ? 1 : 0;
}

static elem_t* alloc_array(long n) {
    const size_t bytes = ((size_t)n * sizeof(elem_t) + 4095) / 4096 * 4096;
    return (elem_t*)aligned_alloc(4096, bytes);
}

int main(int argc, char** argv) {
    double mbPerArray = 80.0; /* 10^6 bytes */
    int reps = 20;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--mb-per-array") && i + 1 < argc) mbPerArray = atof(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--mb-per-array MB] [--reps N]\n", argv[0]);
            return 1;
        }
    }
    if (mbPerArray <= 0 || reps < 2 || reps > 100000) {
        fprintf(stderr, "stream_triad: need --mb-per-array > 0 and 2 <= --reps <= 100000\n");
        return 1;
    }
    const long n = (long)(mbPerArray * 1e6 / sizeof(elem_t)) / 64 * 64;
    elem_t* a = alloc_array(n);
    elem_t* b = alloc_array(n);
    elem_t* c = alloc_array(n);
    double* times = (double*)malloc(sizeof(double) * (size_t)reps);
    if (!a || !b || !c || !times) {
        fprintf(stderr, "stream_triad: allocation of 3 x %ld elements failed\n", n);
        return 1;
    }

    int threads = 0;
    /* First touch: every thread writes the pages it will stream in the timed loop. */
#pragma omp parallel
    {
#pragma omp single
        threads = omp_get_num_threads();
#pragma omp for schedule(static)
        for (long i = 0; i < n; ++i) {
            a[i] = (elem_t)0;
            b[i] = (elem_t)(1.0 + (double)(i & 1023) * 1e-3);
            c[i] = (elem_t)(2.0 - (double)(i & 511) * 1e-3);
        }
    }

    const elem_t s = (elem_t)3.0;
    /* One untimed pass (page tables, TLB, frequency ramp), then `reps` timed passes. */
    for (int r = -1; r < reps; ++r) {
        const double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
        const double t1 = omp_get_wtime();
        if (r >= 0) times[r] = t1 - t0;
    }

    /* Check: the triad is idempotent, so a must equal b + s*c exactly everywhere. */
    long bad = 0;
#pragma omp parallel for schedule(static) reduction(+ : bad)
    for (long i = 0; i < n; ++i)
        if (a[i] != (elem_t)(b[i] + s * c[i])) ++bad;

    qsort(times, (size_t)reps, sizeof(double), cmp_double);
    const double bytes = 3.0 * (double)sizeof(elem_t) * (double)n;
    const double best = times[0];
    const double median = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
    const double worst = times[reps - 1];
    const double gbBest = bytes / best / 1e9, gbMedian = bytes / median / 1e9, gbWorst = bytes / worst / 1e9;

    fprintf(stderr,
            "triad (%s), %d threads, 3 arrays x %ld elements (%.1f MB each), %d reps\n"
            "  best %.4f ms = %.2f GB/s, median %.4f ms = %.2f GB/s, worst %.4f ms = %.2f GB/s\n"
            "  counted 3 x %zu bytes per element (STREAM convention, no write-allocate); "
            "with write-allocate the memory traffic is 4/3 of that (best %.2f GB/s)\n",
            kElemName, threads, n, (double)n * sizeof(elem_t) / 1e6, reps, best * 1e3, gbBest, median * 1e3,
            gbMedian, worst * 1e3, gbWorst, sizeof(elem_t), gbBest * 4.0 / 3.0);
    printf("{\"kernel\": \"triad\", \"element\": \"%s\", \"threads\": %d, \"elements\": %ld, "
           "\"bytes_per_array\": %.0f, \"reps\": %d, \"bytes_counted_per_element\": %zu, "
           "\"best_s\": %.9f, \"median_s\": %.9f, \"best_gbps\": %.3f, \"median_gbps\": %.3f, "
           "\"worst_gbps\": %.3f, \"check_failures\": %ld}\n",
           kElemName, threads, n, (double)n * sizeof(elem_t), reps, 3 * sizeof(elem_t), best, median, gbBest,
           gbMedian, gbWorst, bad);
    if (bad) fprintf(stderr, "stream_triad: %ld elements failed the check\n", bad);
    free(a);
    free(b);
    free(c);
    free(times);
    return bad ? 1 : 0;
}
