/* matmult_test.c: SPL's PETSc matrices (spl_petsc_mat_create) against PETSc's own, on however
 * many ranks mpiexec starts (ctest: 1, 2 and 4; label petsc).
 *
 * For every matrix (the files named by -files, a 2D Laplacian, a block-diagonal matrix whose
 * ranks have no off-diagonal entries) and every split of its rows (PETSc's even split, and none
 * on rank 0 when there are several ranks): MatMult, MatMultAdd (into another vector and in
 * place), MatMultTranspose, MatMultTransposeAdd and MatGetDiagonal through the shell equal
 * PETSc's to 1e-12 relative on random vectors, also after A's values change (the shell plans
 * again); on the SPD matrices (-spd names them, and the Laplacian) KSPCG with Jacobi takes the
 * same number of iterations through both (within 2 or 5%: rounding) and reaches the same
 * solution to 1e-10. A MATDENSE is refused. Every rank checks its own part; the program exits 1
 * if any check failed anywhere. */
#include <petscksp.h>
#include <string.h>

#include "dist_matrix.h"
#include "spl_petsc.h"

static int failures = 0;

static PetscErrorCode expect_close(MPI_Comm comm, const char *what, const char *name, Vec got, Vec want, PetscReal tol) {
  Vec diff;
  PetscReal err, ref;
  PetscFunctionBegin;
  PetscCall(VecDuplicate(want, &diff));
  PetscCall(VecWAXPY(diff, -1.0, want, got));
  PetscCall(VecNorm(diff, NORM_2, &err));
  PetscCall(VecNorm(want, NORM_2, &ref));
  PetscCall(VecDestroy(&diff));
  PetscReal rel = ref > 0 ? err / ref : err;
  if (!(rel <= tol)) {
    ++failures;
    PetscCall(PetscPrintf(comm, "FAIL %s %s: relative difference %g (tolerance %g)\n", name, what, (double)rel, (double)tol));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode random_vec(Vec v, PetscRandom rng) {
  PetscFunctionBegin;
  PetscCall(VecSetRandom(v, rng));
  PetscCall(VecShift(v, -0.5));
  PetscFunctionReturn(0);
}

/* y = A x through S against A's own. */
static PetscErrorCode check_mult(Mat A, Mat S, Vec x, Vec want, Vec got, const char *what, const char *name) {
  PetscFunctionBegin;
  PetscCall(MatMult(A, x, want));
  PetscCall(MatMult(S, x, got));
  PetscCall(expect_close(PetscObjectComm((PetscObject)A), what, name, got, want, 1e-12));
  PetscFunctionReturn(0);
}

/* Every product through S against A's own. */
static PetscErrorCode check_products(Mat A, Mat S, const char *name, PetscRandom rng) {
  MPI_Comm comm = PetscObjectComm((PetscObject)A);
  Vec xr, xc, want_r, got_r, want_c, got_c, w_r, w_c;
  PetscFunctionBegin;
  /* xc: the column layout (MatMult's input), xr: the row layout (its output). */
  PetscCall(MatCreateVecs(A, &xc, &xr));
  PetscCall(VecDuplicate(xr, &want_r));
  PetscCall(VecDuplicate(xr, &got_r));
  PetscCall(VecDuplicate(xr, &w_r));
  PetscCall(VecDuplicate(xc, &want_c));
  PetscCall(VecDuplicate(xc, &got_c));
  PetscCall(VecDuplicate(xc, &w_c));
  PetscCall(random_vec(xc, rng));
  PetscCall(random_vec(xr, rng));
  PetscCall(random_vec(w_r, rng));
  PetscCall(random_vec(w_c, rng));

  PetscCall(check_mult(A, S, xc, want_r, got_r, "MatMult", name));
  PetscCall(MatMultAdd(A, xc, w_r, want_r));
  PetscCall(MatMultAdd(S, xc, w_r, got_r));
  PetscCall(expect_close(comm, "MatMultAdd", name, got_r, want_r, 1e-12));
  PetscCall(VecCopy(w_r, got_r));
  PetscCall(MatMultAdd(S, xc, got_r, got_r));
  PetscCall(expect_close(comm, "MatMultAdd in place", name, got_r, want_r, 1e-12));
  PetscCall(MatMultTranspose(A, xr, want_c));
  PetscCall(MatMultTranspose(S, xr, got_c));
  PetscCall(expect_close(comm, "MatMultTranspose", name, got_c, want_c, 1e-12));
  PetscCall(MatMultTransposeAdd(A, xr, w_c, want_c));
  PetscCall(MatMultTransposeAdd(S, xr, w_c, got_c));
  PetscCall(expect_close(comm, "MatMultTransposeAdd", name, got_c, want_c, 1e-12));
  PetscInt M, N;
  PetscCall(MatGetSize(A, &M, &N));
  if (M == N) {
    PetscCall(MatGetDiagonal(A, want_r));
    PetscCall(MatGetDiagonal(S, got_r));
    PetscCall(expect_close(comm, "MatGetDiagonal", name, got_r, want_r, 0));
  }
  /* New values (the object state moves): the shell plans again. Then back. */
  PetscCall(MatScale(A, -3.0));
  PetscCall(check_mult(A, S, xc, want_r, got_r, "MatMult after MatScale", name));
  PetscCall(MatScale(A, -1.0 / 3.0));
  PetscCall(check_mult(A, S, xc, want_r, got_r, "MatMult after the second MatScale", name));

  PetscCall(VecDestroy(&xr));
  PetscCall(VecDestroy(&xc));
  PetscCall(VecDestroy(&want_r));
  PetscCall(VecDestroy(&got_r));
  PetscCall(VecDestroy(&w_r));
  PetscCall(VecDestroy(&want_c));
  PetscCall(VecDestroy(&got_c));
  PetscCall(VecDestroy(&w_c));
  PetscFunctionReturn(0);
}

static PetscErrorCode cg_solve(Mat op, Vec b, Vec x, PetscInt *its) {
  KSP ksp;
  PC pc;
  KSPConvergedReason reason;
  PetscFunctionBegin;
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)op), &ksp));
  PetscCall(KSPSetOperators(ksp, op, op));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 10000));
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  if (reason <= 0) *its = -(PetscInt)reason - 1000; /* never equal to a converged count */
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(0);
}

static PetscErrorCode check_cg(Mat A, Mat S, const char *name, PetscRandom rng) {
  MPI_Comm comm = PetscObjectComm((PetscObject)A);
  Vec b, xa, xs;
  PetscInt its_a, its_s;
  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, &xa, &b));
  PetscCall(VecDuplicate(xa, &xs));
  PetscCall(random_vec(b, rng));
  PetscCall(cg_solve(A, b, xa, &its_a));
  PetscCall(cg_solve(S, b, xs, &its_s));
  /* The two operators agree up to rounding (SPL's kernels, chosen by the plan on the machine's
   * timings, sum a row in another order), and CG's iteration count on an ill-conditioned matrix
   * moves with rounding: lund_a took 103 and 104. A count off by more than 2 or 5% is an error,
   * as is no convergence; the solutions must agree either way (below). */
  PetscInt slack = its_a / 20 > 2 ? its_a / 20 : 2;
  if (its_a < 0 || its_s < 0 || its_s > its_a + slack || its_s < its_a - slack) {
    ++failures;
    PetscCall(PetscPrintf(comm, "FAIL %s KSPCG+Jacobi: %" PetscInt_FMT " iterations with PETSc's MatMult, %" PetscInt_FMT " with SPL's\n",
                          name, its_a, its_s));
  }
  PetscCall(expect_close(comm, "KSPCG+Jacobi solution", name, xs, xa, 1e-10));
  PetscCall(PetscPrintf(comm, "  %s: KSPCG+Jacobi %" PetscInt_FMT " iterations with PETSc's MatMult, %" PetscInt_FMT " with SPL's\n",
                        name, its_a, its_s));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xa));
  PetscCall(VecDestroy(&xs));
  PetscFunctionReturn(0);
}

static PetscErrorCode check_matrix(Mat A, const char *name, PetscBool spd, PetscRandom rng) {
  Mat S;
  const char *diag, *off;
  PetscFunctionBegin;
  PetscCall(spl_petsc_mat_create(A, 50, &S));
  PetscCall(spl_petsc_mat_kernels(S, &diag, &off));
  PetscCall(PetscPrintf(PetscObjectComm((PetscObject)A), "%s\n", name));
  PetscCall(MatView(S, PETSC_VIEWER_STDOUT_(PetscObjectComm((PetscObject)A))));
  PetscCall(check_products(A, S, name, rng));
  if (spd) PetscCall(check_cg(A, S, name, rng));
  PetscCall(MatDestroy(&S));
  PetscFunctionReturn(0);
}

/* A dense matrix is not one spl_petsc_mat_create takes: an error with its type, not a crash. */
static PetscErrorCode check_refusals(MPI_Comm comm) {
  Mat D, S = NULL;
  PetscErrorCode err;
  PetscFunctionBegin;
  PetscCall(MatCreateDense(comm, PETSC_DECIDE, PETSC_DECIDE, 4, 4, NULL, &D));
  PetscCall(MatAssemblyBegin(D, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(D, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  err = spl_petsc_mat_create(D, 10, &S);
  PetscCall(PetscPopErrorHandler());
  if (err != PETSC_ERR_SUP || S) {
    ++failures;
    PetscCall(PetscPrintf(comm, "FAIL a MATDENSE was not refused (error %d)\n", (int)err));
  } else {
    PetscCall(PetscPrintf(comm, "a MATDENSE is refused (PETSC_ERR_SUP)\n"));
  }
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  char *files[16], *spd[16];
  PetscInt nfiles = 16, nspd = 16;
  PetscBool have_files, have_spd;
  PetscRandom rng;
  PetscMPIInt size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  MPI_Comm comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-files", files, &nfiles, &have_files));
  if (!have_files) nfiles = 0;
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-spd", spd, &nspd, &have_spd));
  if (!have_spd) nspd = 0;
  PetscCall(PetscRandomCreate(comm, &rng));
  PetscCall(PetscRandomSetSeed(rng, 20261128));
  PetscCall(PetscRandomSeed(rng));

  DistSplit splits[2] = {DIST_EVEN, DIST_FIRST_RANK_EMPTY};
  const char *split_names[2] = {"even rows", "no rows on rank 0"};
  for (int si = 0; si < (size > 1 ? 2 : 1); ++si) {
    char name[PETSC_MAX_PATH_LEN + 64];
    Mat A;
    for (PetscInt f = 0; f < nfiles; ++f) {
      PetscBool is_spd = PETSC_FALSE;
      for (PetscInt s = 0; s < nspd; ++s) is_spd = is_spd || strcmp(files[f], spd[s]) == 0;
      PetscCall(PetscSNPrintf(name, sizeof name, "%s (%s)", files[f], split_names[si]));
      PetscCall(dist_read(comm, files[f], splits[si], &A));
      PetscCall(check_matrix(A, name, is_spd, rng));
      PetscCall(MatDestroy(&A));
    }
    PetscCall(PetscSNPrintf(name, sizeof name, "2D Laplacian 40 x 40 (%s)", split_names[si]));
    PetscCall(dist_laplacian2d(comm, 40, splits[si], &A));
    PetscCall(check_matrix(A, name, PETSC_TRUE, rng));
    PetscCall(MatDestroy(&A));
    PetscCall(PetscSNPrintf(name, sizeof name, "block diagonal, no off-diagonal entries (%s)", split_names[si]));
    PetscCall(dist_block_diagonal(comm, 203, splits[si], &A));
    PetscCall(check_matrix(A, name, PETSC_TRUE, rng));
    PetscCall(MatDestroy(&A));
  }
  PetscCall(check_refusals(comm));

  int total = 0;
  PetscCallMPI(MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_MAX, comm));
  PetscCall(PetscPrintf(comm, total ? "FAILED: %d checks on %d ranks\n" : "PASSED on %d ranks\n",
                        total ? total : (int)size, (int)size));
  for (PetscInt f = 0; f < nfiles; ++f) PetscCall(PetscFree(files[f]));
  for (PetscInt s = 0; s < nspd; ++s) PetscCall(PetscFree(spd[s]));
  PetscCall(PetscRandomDestroy(&rng));
  PetscCall(PetscFinalize());
  return total ? 1 : 0;
}
