/*
 * cpu_freq.c: measures the core clock of every CPU this process may run on, for Tessera's
 * roofline accuracy check (issue 7, bench/cpu_roof_accuracy.sh).
 *
 * Method: a thread pinned to one CPU (sched_setaffinity) runs a long chain of dependent 64-bit
 * integer adds (`add $1, reg`, each needs the previous result: latency 1 cycle on every x86 core
 * of the last decade, so the chain retires exactly one add per cycle; the loop counter runs on
 * other ALUs, off the chain) and times it with clock_gettime(CLOCK_MONOTONIC). GHz = adds / ns.
 * Each CPU: a ~0.3 s warm-up (frequency ramp), then `reps` timed runs of ~0.1 s; the median and the
 * maximum are reported.
 *
 * Modes (all run in one invocation):
 *   - "alone":  each CPU in turn while the others idle;
 *   - "all":    all CPUs at once (one pinned thread each), the clock under an all-core load;
 *   - "avx512": all CPUs at once, and besides the add chain each thread issues one independent
 *               512-bit FP32 FMA per add (8 accumulators, off the critical path), the clock while
 *               the wide FMA units are busy (where a CPU lowers its clock for AVX-512, it shows
 *               here). Only when compiled with AVX-512 support (-march=native on such a CPU).
 *
 * Build: cc -O2 -march=native -pthread bench/cpu_freq.c -o cpu_freq
 * Output: a summary on stderr, one JSON object on stdout.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ADDS_PER_ITER 96 /* 12 blocks of 8 */

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Runs `iters` x ADDS_PER_ITER dependent adds; returns the chain's value (keeps it alive). */
static long add_chain(long iters, long x) {
    for (long i = 0; i < iters; ++i) {
        __asm__ volatile(".rept 96\n\taddq $1, %0\n\t.endr\n" : "+r"(x));
    }
    return x;
}

#ifdef __AVX512F__
/* The same chain with one independent zmm FMA beside every add (8 accumulators zmm0..zmm7, each
 * gets 12 FMAs per 96 cycles: far below its 4-cycle latency bound). */
static long add_chain_avx512(long iters, long x) {
    __asm__ volatile("vpxord %%zmm0, %%zmm0, %%zmm0\n\t"
                     "vmovaps %%zmm0, %%zmm1\n\tvmovaps %%zmm0, %%zmm2\n\tvmovaps %%zmm0, %%zmm3\n\t"
                     "vmovaps %%zmm0, %%zmm4\n\tvmovaps %%zmm0, %%zmm5\n\tvmovaps %%zmm0, %%zmm6\n\t"
                     "vmovaps %%zmm0, %%zmm7\n\tvmovaps %%zmm0, %%zmm8\n\tvmovaps %%zmm0, %%zmm9\n\t" ::
                         : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9");
    for (long i = 0; i < iters; ++i) {
        __asm__ volatile(".rept 12\n\t"
                         "addq $1, %0\n\tvfmadd231ps %%zmm8, %%zmm9, %%zmm0\n\t"
                         "addq $1, %0\n\tvfmadd231ps %%zmm8, %%zmm9, %%zmm1\n\t"
                         "addq $1, %0\n\tvfmadd231ps %%zmm8, %%zmm9, %%zmm2\n\t"
                         "addq $1, %0\n\tvfmadd231ps %%zmm8, %%zmm9, %%zmm3\n\t"
                         "addq $1, %0\n\tvfmadd231ps %%zmm8, %%zmm9, %%zmm4\n\t"
                         "addq $1, %0\n\tvfmadd231ps %%zmm8, %%zmm9, %%zmm5\n\t"
                         "addq $1, %0\n\tvfmadd231ps %%zmm8, %%zmm9, %%zmm6\n\t"
                         "addq $1, %0\n\tvfmadd231ps %%zmm8, %%zmm9, %%zmm7\n\t"
                         ".endr\n"
                         : "+r"(x)
                         :
                         : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9");
    }
    __asm__ volatile("vzeroupper" ::: "memory");
    return x;
}
#define HAVE_AVX512_MODE 1
#else
#define HAVE_AVX512_MODE 0
#endif

static int cmp_double(const void* x, const void* y) {
    const double a = *(const double*)x, b = *(const double*)y;
    return a < b ? -1 : a > b ? 1 : 0;
}

struct Job {
    int cpu;
    int avx512;
    int reps;
    double median_ghz;
    double max_ghz;
    int pinned;
    long sink;
};

static int pin_to(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof(set), &set) == 0;
}

static double run_once(long iters, int avx512, long* sink) {
    const double t0 = now_ns();
#if HAVE_AVX512_MODE
    *sink += avx512 ? add_chain_avx512(iters, *sink) : add_chain(iters, *sink);
#else
    (void)avx512;
    *sink += add_chain(iters, *sink);
#endif
    const double t1 = now_ns();
    return (double)iters * ADDS_PER_ITER / (t1 - t0); /* adds per ns = GHz */
}

static void* job_main(void* p) {
    struct Job* j = (struct Job*)p;
    j->pinned = pin_to(j->cpu);
    /* Calibrate to ~0.1 s per run from a short probe, warm up ~0.3 s. */
    long iters = 100000;
    double ghz = run_once(iters, j->avx512, &j->sink);
    iters = (long)(0.1e9 * ghz / ADDS_PER_ITER);
    if (iters < 1000) iters = 1000;
    for (int w = 0; w < 3; ++w) run_once(iters, j->avx512, &j->sink);
    double* g = (double*)malloc(sizeof(double) * (size_t)j->reps);
    for (int r = 0; r < j->reps; ++r) g[r] = run_once(iters, j->avx512, &j->sink);
    qsort(g, (size_t)j->reps, sizeof(double), cmp_double);
    j->median_ghz = j->reps % 2 ? g[j->reps / 2] : 0.5 * (g[j->reps / 2 - 1] + g[j->reps / 2]);
    j->max_ghz = g[j->reps - 1];
    free(g);
    return NULL;
}

/* Runs one job per listed CPU, concurrently when `together`, else one after another. */
static void run_mode(const int* cpus, int ncpu, int together, int avx512, int reps, struct Job* out) {
    pthread_t th[256];
    for (int i = 0; i < ncpu; ++i) {
        memset(&out[i], 0, sizeof(out[i]));
        out[i].cpu = cpus[i];
        out[i].avx512 = avx512;
        out[i].reps = reps;
        out[i].sink = i + 1;
    }
    if (together) {
        for (int i = 0; i < ncpu; ++i) pthread_create(&th[i], NULL, job_main, &out[i]);
        for (int i = 0; i < ncpu; ++i) pthread_join(th[i], NULL);
    } else {
        for (int i = 0; i < ncpu; ++i) {
            pthread_create(&th[0], NULL, job_main, &out[i]);
            pthread_join(th[0], NULL);
        }
    }
}

static void print_mode(const char* name, const struct Job* jobs, int ncpu, int first) {
    printf("%s\"%s\": [", first ? "" : ", ", name);
    for (int i = 0; i < ncpu; ++i)
        printf("%s{\"cpu\": %d, \"median_ghz\": %.4f, \"max_ghz\": %.4f, \"pinned\": %s}", i ? ", " : "", jobs[i].cpu,
               jobs[i].median_ghz, jobs[i].max_ghz, jobs[i].pinned ? "true" : "false");
    printf("]");
    for (int i = 0; i < ncpu; ++i)
        fprintf(stderr, "  %-7s cpu %d: median %.3f GHz, max %.3f GHz%s\n", name, jobs[i].cpu, jobs[i].median_ghz,
                jobs[i].max_ghz, jobs[i].pinned ? "" : " (NOT pinned)");
}

int main(int argc, char** argv) {
    int reps = 11;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--reps N]\n", argv[0]);
            return 1;
        }
    }
    if (reps < 1 || reps > 1000) {
        fprintf(stderr, "cpu_freq: --reps must be 1..1000\n");
        return 1;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        perror("sched_getaffinity");
        return 1;
    }
    int cpus[256], ncpu = 0;
    for (int c = 0; c < CPU_SETSIZE && ncpu < 256; ++c)
        if (CPU_ISSET(c, &set)) cpus[ncpu++] = c;

    struct Job alone[256], all[256], wide[256];
    fprintf(stderr, "cpu_freq: %d CPUs, dependent 64-bit add chain (1 add/cycle), %d reps of ~0.1 s\n", ncpu, reps);
    run_mode(cpus, ncpu, 0, 0, reps, alone);
    run_mode(cpus, ncpu, 1, 0, reps, all);
    printf("{\"cpus\": %d, ", ncpu);
    print_mode("alone", alone, ncpu, 1);
    print_mode("all", all, ncpu, 0);
    if (HAVE_AVX512_MODE) {
        run_mode(cpus, ncpu, 1, 1, reps, wide);
        print_mode("avx512", wide, ncpu, 0);
    }
    printf("}\n");
    return 0;
}
