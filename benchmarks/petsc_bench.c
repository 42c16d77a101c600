/* petsc_bench.c: MatMult through PETSc's MPIAIJ (SeqAIJ on one rank) against the same matrix
 * through SPL's shell (spl_petsc_mat_create), in one run on however many ranks mpiexec starts
 * (benchmarks/run-petsc.sh: 1 and 2, one thread per rank).
 *
 * For each matrix (-files, named by -names; a 2D Laplacian of -laplacian k x k rows): both
 * products are checked against each other first (1e-12 relative), then timed in -rounds rounds
 * (at least 50); a round times one MatMult of PETSc's, one of SPL's and one of SPL's without the
 * overlap of the ghost exchange (-spl_petsc_overlap 0), in an order drawn at random for each
 * round, each after a barrier, its time the slowest rank's. Medians are printed as CSV on rank 0, with the bytes a
 * product must move (values and column indices, row offsets, x and y once: the sum over ranks)
 * and a STREAM triad run on every rank at once before the matrices, its bandwidth the sum. */
#include <petscmat.h>
#include <stdlib.h>
#include <string.h>

#include "dist_matrix.h"
#include "spl_petsc.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Seconds of one MatMult, the slowest rank's. */
static PetscErrorCode time_mult(Mat M, Vec x, Vec y, double *seconds) {
  MPI_Comm comm = PetscObjectComm((PetscObject)M);
  PetscFunctionBegin;
  PetscCallMPI(MPI_Barrier(comm));
  double t0 = MPI_Wtime();
  PetscCall(MatMult(M, x, y));
  double dt = MPI_Wtime() - t0;
  PetscCallMPI(MPI_Allreduce(&dt, seconds, 1, MPI_DOUBLE, MPI_MAX, comm));
  PetscFunctionReturn(0);
}

/* a = b + s c on every rank at once: GB/s summed over ranks (24 bytes an element). */
static PetscErrorCode triad(MPI_Comm comm, double *gbs) {
  const size_t n = (size_t)1 << 23;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c), best = 1e30;
  PetscFunctionBegin;
  PetscCheck(a && b && c, PETSC_COMM_SELF, PETSC_ERR_MEM, "triad arrays");
  for (size_t i = 0; i < n; ++i) a[i] = 0, b[i] = 1, c[i] = 2;
  for (int r = 0; r < 10; ++r) {
    PetscCallMPI(MPI_Barrier(comm));
    double t0 = MPI_Wtime();
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
    double dt = MPI_Wtime() - t0, slowest;
    PetscCallMPI(MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm));
    if (slowest < best) best = slowest;
  }
  PetscMPIInt size;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  volatile double sink = a[n / 2]; /* the stores are used */
  (void)sink;
  *gbs = 24.0 * (double)n * size / best / 1e9;
  free(a), free(b), free(c);
  PetscFunctionReturn(0);
}

static PetscErrorCode bench(Mat A, const char *name, PetscInt rounds, double triad_gbs) {
  MPI_Comm comm = PetscObjectComm((PetscObject)A);
  Mat S, S_serial;
  Vec x, y_petsc, y_spl;
  PetscFunctionBegin;
  PetscCall(PetscOptionsSetValue(NULL, "-spl_petsc_overlap", "1"));
  PetscCall(spl_petsc_mat_create(A, 3 * rounds + 10, &S));
  PetscCall(PetscOptionsSetValue(NULL, "-spl_petsc_overlap", "0"));
  PetscCall(spl_petsc_mat_create(A, 3 * rounds + 10, &S_serial));
  PetscCall(PetscOptionsClearValue(NULL, "-spl_petsc_overlap"));
  PetscCall(MatCreateVecs(A, &x, &y_petsc));
  PetscCall(VecDuplicate(y_petsc, &y_spl));
  {
    PetscRandom rng;
    PetscCall(PetscRandomCreate(comm, &rng));
    PetscCall(PetscRandomSetSeed(rng, 7));
    PetscCall(PetscRandomSeed(rng));
    PetscCall(VecSetRandom(x, rng));
    PetscCall(PetscRandomDestroy(&rng));
  }
  /* Correct first. */
  PetscReal err, ref;
  PetscCall(MatMult(A, x, y_petsc));
  PetscCall(MatMult(S, x, y_spl));
  PetscCall(VecAXPY(y_spl, -1.0, y_petsc));
  PetscCall(VecNorm(y_spl, NORM_2, &err));
  PetscCall(VecNorm(y_petsc, NORM_2, &ref));
  PetscCheck(err <= 1e-12 * ref, comm, PETSC_ERR_PLIB, "%s: SPL's MatMult differs from PETSc's by %g relative", name,
             (double)(err / ref));
  /* Warm: a few untimed calls of each. */
  for (int w = 0; w < 3; ++w) {
    PetscCall(MatMult(A, x, y_petsc));
    PetscCall(MatMult(S, x, y_spl));
    PetscCall(MatMult(S_serial, x, y_spl));
  }
  double *t_petsc, *t_spl, *t_serial;
  PetscCall(PetscMalloc3(rounds, &t_petsc, rounds, &t_spl, rounds, &t_serial));
  /* Each round in an order drawn anew (the same sequence on every rank and in every run): a
   * product's speed depends on which one ran before it (what it left in the caches). */
  Mat which[3] = {A, S, S_serial};
  double *times[3] = {t_petsc, t_spl, t_serial};
  unsigned long long lcg = 20261128ULL;
  for (PetscInt r = 0; r < rounds; ++r) {
    int order[3] = {0, 1, 2};
    for (int i = 2; i > 0; --i) {
      lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
      int j = (int)((lcg >> 33) % (unsigned long long)(i + 1)), t = order[i];
      order[i] = order[j], order[j] = t;
    }
    for (int i = 0; i < 3; ++i) PetscCall(time_mult(which[order[i]], x, which[order[i]] == A ? y_petsc : y_spl, &times[order[i]][r]));
  }
  double mp = median(t_petsc, (int)rounds), ms = median(t_spl, (int)rounds), mn = median(t_serial, (int)rounds);

  /* Compulsory bytes and the kernels each rank's plans chose. */
  MatInfo info;
  PetscInt M, N;
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  PetscCall(MatGetSize(A, &M, &N));
  double bytes = 12.0 * info.nz_used + 4.0 * (M + 1) + 8.0 * (M + N);
  const char *dk, *ok;
  PetscCall(spl_petsc_mat_kernels(S, &dk, &ok));
  char mine[64], all[64 * 64] = "";
  PetscCall(PetscSNPrintf(mine, sizeof mine, "%s/%s", dk, ok));
  PetscMPIInt rank, size;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  char *gathered = NULL;
  if (rank == 0) PetscCall(PetscMalloc1(64 * size, &gathered));
  PetscCallMPI(MPI_Gather(mine, 64, MPI_CHAR, gathered, 64, MPI_CHAR, 0, comm));
  if (rank == 0) {
    for (PetscMPIInt p = 0; p < size && p < 64; ++p) {
      if (p) PetscCall(PetscStrlcat(all, " ", sizeof all));
      PetscCall(PetscStrlcat(all, gathered + 64 * p, sizeof all));
    }
    PetscCall(PetscFree(gathered));
  }
  PetscCall(PetscPrintf(comm, "%s,%d,%" PetscInt_FMT ",%.0f,%.3f,%.3f,%.3f,%.3f,%.2f,%.2f,%.2f,%s,%" PetscInt_FMT "\n",
                        name, (int)size, M, (double)info.nz_used, mp * 1e6, ms * 1e6, mn * 1e6, mp / ms,
                        bytes / ms / 1e9, bytes / mp / 1e9, triad_gbs, all, rounds));
  PetscCall(PetscFree3(t_petsc, t_spl, t_serial));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y_petsc));
  PetscCall(VecDestroy(&y_spl));
  PetscCall(MatDestroy(&S));
  PetscCall(MatDestroy(&S_serial));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  char *files[32], *names[32];
  PetscInt nfiles = 32, nnames = 32, k = 1000, rounds = 60;
  PetscBool have_files, have_names;
  double triad_gbs = 0;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  MPI_Comm comm = PETSC_COMM_WORLD;
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-files", files, &nfiles, &have_files));
  if (!have_files) nfiles = 0;
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-names", names, &nnames, &have_names));
  PetscCheck(!have_files || (have_names && nnames == nfiles), comm, PETSC_ERR_ARG_WRONG, "-names must name every -files entry");
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-laplacian", &k, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-rounds", &rounds, NULL));
  PetscCheck(rounds >= 50, comm, PETSC_ERR_ARG_OUTOFRANGE, "-rounds: at least 50");
  PetscCall(triad(comm, &triad_gbs));
  PetscCall(PetscPrintf(comm, "matrix,ranks,rows,nnz,petsc_us,spl_us,spl_no_overlap_us,speedup,spl_gbs,petsc_gbs,triad_gbs,kernels,rounds\n"));
  for (PetscInt f = 0; f < nfiles; ++f) {
    Mat A;
    PetscCall(dist_read(comm, files[f], DIST_EVEN, &A));
    PetscCall(bench(A, names[f], rounds, triad_gbs));
    PetscCall(MatDestroy(&A));
    PetscCall(PetscFree(files[f]));
    PetscCall(PetscFree(names[f]));
  }
  if (k > 0) {
    Mat A;
    char name[64];
    PetscCall(PetscSNPrintf(name, sizeof name, "laplacian2d-%" PetscInt_FMT, k));
    PetscCall(dist_laplacian2d(comm, k, DIST_EVEN, &A));
    PetscCall(bench(A, name, rounds, triad_gbs));
    PetscCall(MatDestroy(&A));
  }
  PetscCall(PetscFinalize());
  return 0;
}
