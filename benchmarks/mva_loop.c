/* Tight C loops of exact MVA for queue stations, the yardstick of bench_kernel_vs_c.py.
 * Same recursion and lattice order as mva._kernels.closed_lattice_mva / single_class_mva
 * (mixed radix, class 0 fastest), no marginals (every station a single server). */
#include <stdlib.h>

void lattice_mva(int M, int C, const double *demand /* M x C */, const double *think,
                 const long *population, double *throughput_out /* C */)
{
    long strides[64], n_vec[64];
    long L = 1;
    for (int c = 0; c < C; c++) { strides[c] = L; L *= population[c] + 1; n_vec[c] = 0; }
    double *queue = calloc((size_t)L * M, sizeof(double));
    double *x = calloc((size_t)C, sizeof(double));
    double *resid = calloc((size_t)C * M, sizeof(double));
    for (long idx = 1; idx < L; idx++) {
        for (int c = 0; c < C; c++) {
            if (n_vec[c] < population[c]) { n_vec[c]++; break; }
            n_vec[c] = 0;
        }
        for (int c = 0; c < C; c++) {
            if (n_vec[c] == 0) { x[c] = 0.0; continue; }
            const double *prev = queue + (idx - strides[c]) * M;
            double total = think[c];
            for (int k = 0; k < M; k++) {
                double r = demand[k * C + c] * (1.0 + prev[k]);
                resid[c * M + k] = r;
                total += r;
            }
            x[c] = n_vec[c] / total;
        }
        double *q = queue + idx * M;
        for (int k = 0; k < M; k++) q[k] = 0.0;
        for (int c = 0; c < C; c++)
            if (n_vec[c] > 0)
                for (int k = 0; k < M; k++) q[k] += x[c] * resid[c * M + k];
    }
    for (int c = 0; c < C; c++) throughput_out[c] = x[c];
    free(queue); free(x); free(resid);
}

void single_mva(int M, long N, const double *demand, double think, double *throughput_out,
                double *queue /* M, out */)
{
    double x = 0.0;
    for (int k = 0; k < M; k++) queue[k] = 0.0;
    double resid[1024];
    for (long n = 1; n <= N; n++) {
        double total = think;
        for (int k = 0; k < M; k++) { resid[k] = demand[k] * (1.0 + queue[k]); total += resid[k]; }
        x = n / total;
        for (int k = 0; k < M; k++) queue[k] = x * resid[k];
    }
    *throughput_out = x;
}
