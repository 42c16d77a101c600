/* spl_petsc.c: a MATSHELL whose products are SPL's kernels on a PETSc AIJ matrix's blocks
 * (issue 27; include/spl_petsc.h, docs/petsc.md).
 *
 * Takes: an assembled MATMPIAIJ (each rank's rows as a diagonal block Ad, columns it owns, and an
 * off-diagonal block Ao whose columns 0..nghost-1 are the sorted global columns colmap) or a
 * MATSEQAIJ (Ad alone), PetscInt 32-bit, PetscScalar double.
 * Gives: MatMult as PETSc's MPIAIJ computes it, with SPL's kernels in the blocks: the ghost
 * values of x are scattered (a VecScatter from colmap) while Ad x_owned runs, then the non-empty
 * rows of Ao (a compressed copy of its offsets; the columns and values are PETSc's) times the
 * ghosts, added into y at their rows by another of SPL's kernels (spl_petsc_add_row_sums). Each
 * block has a plan (spl_petsc.spl's generated NAME_plan/NAME_run), made when the shell is made
 * and again when A's object state has moved since; the transposed products' plans are made at
 * their first use. MatMultTranspose sends Ao' x_owned back with a reverse scatter that adds.
 * MatMultAdd and MatMultTransposeAdd are the products into a work vector plus the other
 * operand; MatGetDiagonal is A's own. */
#include "spl_petsc.h"

#include <stdint.h>
#include <stdlib.h>

#include "spl_petsc_kernels.h"
#include "spl_runtime.h"

/* A matrix's object state (it moves with every change of values or pattern) is read through
 * PETSc's PetscObjectStateGet, which 3.18 declares only in its private headers; the prototype is
 * the library's own, repeated here instead of including them. */
PETSC_EXTERN PetscErrorCode PetscObjectStateGet(PetscObject, PetscObjectState *);

/* The index width of the kernels (int32 offsets and columns); PETSc's PetscInt must match.
 * A test builds this file with 64 to see the refusal (tests/petsc). */
#ifndef SPL_PETSC_INDEX_BITS
#define SPL_PETSC_INDEX_BITS 32
#endif

/* One block in CSR, as the kernels read it, and its plans. */
typedef struct {
  int64_t rows, cols;
  const int32_t *offs, *colidx;
  const double *vals;
  int64_t nnz;
  spl_plan *plan;   /* y = B x; NULL for a block without rows or entries */
  spl_plan *plan_t; /* y = B' x; made at the first transposed product */
} SplBlock;

typedef struct {
  Mat A;                  /* referenced */
  Mat Ad, Ao;             /* A's blocks (Ao NULL on MATSEQAIJ) */
  PetscObjectState state; /* A's state when the plans were made */
  PetscBool planned;
  PetscInt expected_calls;
  SplBlock diag;
  SplBlock off;           /* Ao's non-empty rows: off.offs is compressed_offs */
  SplBlock off_all;       /* Ao's every row, for the transposed product */
  PetscInt *off_rows;     /* the rows of Ao with entries (off.rows of them) */
  int32_t *compressed_offs;
  PetscScalar *off_sums;  /* Ao's row sums, one per non-empty row */
  Vec ghosts;             /* nghost values of x (or of Ao' x in the transposed product) */
  VecScatter scatter;     /* x -> ghosts */
  Vec work_rows, work_cols; /* MatMultAdd, MatMultTransposeAdd */
  PetscBool overlap;      /* the diagonal block's product runs while the ghosts travel */
} SplShell;

static PetscErrorCode spl_check(int code, const char *what) {
  PetscFunctionBegin;
  if (code) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "SPL's %s failed: %s", what, spl_error_string(code));
  PetscFunctionReturn(0);
}

/* A block's CSR arrays, as PETSc holds them (nothing copied). */
static PetscErrorCode block_get(Mat B, SplBlock *blk) {
  PetscInt n, m, nrows;
  const PetscInt *ia, *ja;
  PetscBool done;
  const PetscScalar *va;
  PetscFunctionBegin;
  PetscCall(MatGetSize(B, &n, &m));
  PetscCall(MatGetRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &nrows, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "the AIJ block gives no CSR arrays (MatGetRowIJ)");
  PetscCall(MatSeqAIJGetArrayRead(B, &va));
  blk->rows = n;
  blk->cols = m;
  blk->offs = (const int32_t *)ia;
  blk->colidx = (const int32_t *)ja;
  blk->vals = va;
  blk->nnz = n > 0 ? ia[n] : 0;
  PetscFunctionReturn(0);
}

static PetscErrorCode block_restore(Mat B, SplBlock *blk) {
  PetscInt nrows;
  PetscBool done;
  const PetscInt *ia = (const PetscInt *)blk->offs, *ja = (const PetscInt *)blk->colidx;
  const PetscScalar *va = blk->vals;
  PetscFunctionBegin;
  if (blk->vals) PetscCall(MatSeqAIJRestoreArrayRead(B, &va));
  if (blk->offs) PetscCall(MatRestoreRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &nrows, &ia, &ja, &done));
  PetscFunctionReturn(0);
}

static void block_free_plans(SplBlock *blk) {
  if (blk->plan) spl_plan_free(blk->plan);
  if (blk->plan_t) spl_plan_free(blk->plan_t);
  blk->plan = blk->plan_t = NULL;
}

/* Everything made from A's current state. */
static PetscErrorCode shell_release(SplShell *s) {
  PetscFunctionBegin;
  block_free_plans(&s->diag);
  block_free_plans(&s->off);
  block_free_plans(&s->off_all);
  if (s->planned) {
    PetscCall(block_restore(s->Ad, &s->diag));
    if (s->Ao) PetscCall(block_restore(s->Ao, &s->off_all));
  }
  PetscCall(PetscFree(s->off_rows));
  PetscCall(PetscFree(s->compressed_offs));
  PetscCall(PetscFree(s->off_sums));
  PetscCall(VecScatterDestroy(&s->scatter));
  PetscCall(VecDestroy(&s->ghosts));
  PetscCall(PetscMemzero(&s->diag, sizeof s->diag));
  PetscCall(PetscMemzero(&s->off, sizeof s->off));
  PetscCall(PetscMemzero(&s->off_all, sizeof s->off_all));
  s->planned = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode plan_block(SplBlock *blk, PetscInt expected_calls) {
  PetscFunctionBegin;
  if (blk->rows > 0 && blk->nnz > 0)
    PetscCall(spl_check(spl_petsc_spmv_plan(blk->rows, blk->cols, blk->offs, blk->vals, blk->colidx,
                                            expected_calls, &blk->plan),
                        "plan of a block's product"));
  PetscFunctionReturn(0);
}

/* The blocks, the ghost scatter, the compressed off-diagonal rows and the plans of A as it is. */
static PetscErrorCode shell_plan(SplShell *s) {
  PetscBool mpi;
  const PetscInt *colmap = NULL;
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)s->A, MATMPIAIJ, &mpi));
  if (mpi) PetscCall(MatMPIAIJGetSeqAIJ(s->A, &s->Ad, &s->Ao, &colmap));
  else s->Ad = s->A, s->Ao = NULL;
  PetscCall(block_get(s->Ad, &s->diag));
  s->planned = PETSC_TRUE;
  PetscCall(plan_block(&s->diag, s->expected_calls));
  if (s->Ao) {
    PetscCall(block_get(s->Ao, &s->off_all));
    PetscInt nghost = (PetscInt)s->off_all.cols, n = (PetscInt)s->off_all.rows, nonempty = 0;
    const int32_t *offs = s->off_all.offs;
    for (PetscInt i = 0; i < n; ++i) nonempty += offs[i + 1] > offs[i];
    PetscCall(PetscMalloc1(nonempty, &s->off_rows));
    PetscCall(PetscMalloc1(nonempty + 1, &s->compressed_offs));
    PetscCall(PetscMalloc1(nonempty, &s->off_sums));
    PetscInt k = 0;
    for (PetscInt i = 0; i < n; ++i)
      if (offs[i + 1] > offs[i]) s->off_rows[k] = i, s->compressed_offs[k++] = offs[i];
    s->compressed_offs[nonempty] = n > 0 ? offs[n] : 0;
    s->off = s->off_all;
    s->off.rows = nonempty;
    s->off.offs = s->compressed_offs;
    s->off.plan = s->off.plan_t = NULL;
    PetscCall(plan_block(&s->off, s->expected_calls));
    /* x's ghost values: the columns colmap names, into a sequential vector. */
    Vec xtemplate;
    IS from;
    PetscCall(MatCreateVecs(s->A, &xtemplate, NULL));
    PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nghost, colmap, PETSC_COPY_VALUES, &from));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, nghost, &s->ghosts));
    PetscCall(VecScatterCreate(xtemplate, from, s->ghosts, NULL, &s->scatter));
    PetscCall(ISDestroy(&from));
    PetscCall(VecDestroy(&xtemplate));
  }
  PetscCall(PetscObjectStateGet((PetscObject)s->A, &s->state));
  PetscFunctionReturn(0);
}

/* Plans again when A changed since (MatSetValues and assembly move its object state). */
static PetscErrorCode shell_current(SplShell *s) {
  PetscObjectState state;
  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)s->A, &state));
  if (!s->planned || state != s->state) {
    PetscCall(shell_release(s));
    PetscCall(shell_plan(s));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode plan_transposed(SplBlock *blk, PetscInt expected_calls) {
  PetscFunctionBegin;
  if (!blk->plan_t && blk->rows > 0 && blk->nnz > 0)
    PetscCall(spl_check(spl_petsc_spmv_t_plan(blk->rows, blk->cols, blk->offs, blk->vals, blk->colidx,
                                              expected_calls, &blk->plan_t),
                        "plan of a block's transposed product"));
  PetscFunctionReturn(0);
}

static PetscErrorCode shell_mult(Mat S, Vec x, Vec y) {
  SplShell *s;
  const PetscScalar *xa, *ga;
  PetscScalar *ya;
  PetscFunctionBegin;
  PetscCall(MatShellGetContext(S, &s));
  PetscCall(shell_current(s));
  /* The exchange runs while the diagonal block is multiplied (or before it, with
   * -spl_petsc_overlap 0, which the benchmark uses to show what the overlap hides). */
  if (s->scatter) PetscCall(VecScatterBegin(s->scatter, x, s->ghosts, INSERT_VALUES, SCATTER_FORWARD));
  if (s->scatter && !s->overlap) PetscCall(VecScatterEnd(s->scatter, x, s->ghosts, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  if (s->diag.plan) PetscCall(spl_check(spl_petsc_spmv_run(s->diag.plan, xa, ya), "diagonal block's product"));
  else PetscCall(PetscArrayzero(ya, s->diag.rows));
  PetscCall(VecRestoreArrayRead(x, &xa));
  if (s->scatter) {
    if (s->overlap) PetscCall(VecScatterEnd(s->scatter, x, s->ghosts, INSERT_VALUES, SCATTER_FORWARD));
    if (s->off.plan) {
      PetscCall(VecGetArrayRead(s->ghosts, &ga));
      PetscCall(spl_check(spl_petsc_spmv_run(s->off.plan, ga, s->off_sums), "off-diagonal block's product"));
      PetscCall(VecRestoreArrayRead(s->ghosts, &ga));
      PetscCall(spl_check(spl_petsc_add_row_sums(s->diag.rows, s->off.rows, s->off_sums, (const int32_t *)s->off_rows, ya),
                          "off-diagonal block's sums"));
    }
  }
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)(s->diag.nnz + s->off.nnz)));
  PetscFunctionReturn(0);
}

static PetscErrorCode shell_mult_transpose(Mat S, Vec x, Vec y) {
  SplShell *s;
  const PetscScalar *xa;
  PetscScalar *ya, *ga;
  PetscFunctionBegin;
  PetscCall(MatShellGetContext(S, &s));
  PetscCall(shell_current(s));
  PetscCall(plan_transposed(&s->diag, s->expected_calls));
  PetscCall(plan_transposed(&s->off_all, s->expected_calls));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  if (s->diag.plan_t)
    PetscCall(spl_check(spl_petsc_spmv_t_run(s->diag.plan_t, xa, ya), "diagonal block's transposed product"));
  else PetscCall(PetscArrayzero(ya, s->diag.cols));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  if (s->scatter) {
    /* Ao' x_owned is owed to the ghost columns' owners: a reverse scatter adds it there. */
    PetscCall(VecGetArrayWrite(s->ghosts, &ga));
    if (s->off_all.plan_t)
      PetscCall(spl_check(spl_petsc_spmv_t_run(s->off_all.plan_t, xa, ga), "off-diagonal block's transposed product"));
    else PetscCall(PetscArrayzero(ga, s->off_all.cols));
    PetscCall(VecRestoreArrayWrite(s->ghosts, &ga));
  }
  PetscCall(VecRestoreArrayRead(x, &xa));
  if (s->scatter) {
    PetscCall(VecScatterBegin(s->scatter, s->ghosts, y, ADD_VALUES, SCATTER_REVERSE));
    PetscCall(VecScatterEnd(s->scatter, s->ghosts, y, ADD_VALUES, SCATTER_REVERSE));
  }
  PetscCall(PetscLogFlops(2.0 * (PetscLogDouble)(s->diag.nnz + s->off_all.nnz)));
  PetscFunctionReturn(0);
}

/* z = y + op(A) x: the product into a work vector (z may be y). */
static PetscErrorCode add_product(Vec product, Vec y, Vec z) {
  PetscFunctionBegin;
  if (z == y) PetscCall(VecAXPY(z, 1.0, product));
  else PetscCall(VecWAXPY(z, 1.0, product, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode shell_mult_add(Mat S, Vec x, Vec y, Vec z) {
  SplShell *s;
  PetscFunctionBegin;
  PetscCall(MatShellGetContext(S, &s));
  if (!s->work_rows) PetscCall(MatCreateVecs(s->A, NULL, &s->work_rows));
  PetscCall(shell_mult(S, x, s->work_rows));
  PetscCall(add_product(s->work_rows, y, z));
  PetscFunctionReturn(0);
}

static PetscErrorCode shell_mult_transpose_add(Mat S, Vec x, Vec y, Vec z) {
  SplShell *s;
  PetscFunctionBegin;
  PetscCall(MatShellGetContext(S, &s));
  if (!s->work_cols) PetscCall(MatCreateVecs(s->A, &s->work_cols, NULL));
  PetscCall(shell_mult_transpose(S, x, s->work_cols));
  PetscCall(add_product(s->work_cols, y, z));
  PetscFunctionReturn(0);
}

static PetscErrorCode shell_get_diagonal(Mat S, Vec d) {
  SplShell *s;
  PetscFunctionBegin;
  PetscCall(MatShellGetContext(S, &s));
  PetscCall(MatGetDiagonal(s->A, d));
  PetscFunctionReturn(0);
}

static const char *plan_name(const spl_plan *plan) { return plan ? spl_plan_kernel(plan) : "none"; }

static PetscErrorCode shell_view(Mat S, PetscViewer viewer) {
  SplShell *s;
  PetscBool ascii;
  PetscMPIInt rank;
  PetscFunctionBegin;
  PetscCall(MatShellGetContext(S, &s));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(0);
  PetscCall(shell_current(s));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)S), &rank));
  MatType type;
  PetscCall(MatGetType(s->A, &type));
  PetscCall(PetscViewerASCIIPrintf(viewer, "SPL kernels over a %s matrix (spl_petsc_mat_create)\n", type));
  PetscCall(PetscViewerASCIIPushSynchronized(viewer));
  PetscCall(PetscViewerASCIISynchronizedPrintf(
      viewer, "  [%d] %" PetscInt_FMT " rows: diagonal block %" PetscInt_FMT " entries, kernel %s; off-diagonal block %" PetscInt_FMT
              " entries in %" PetscInt_FMT " rows, %" PetscInt_FMT " ghost columns, kernel %s\n",
      (int)rank, (PetscInt)s->diag.rows, (PetscInt)s->diag.nnz, plan_name(s->diag.plan), (PetscInt)s->off.nnz,
      (PetscInt)s->off.rows, (PetscInt)s->off_all.cols, plan_name(s->off.plan)));
  PetscCall(PetscViewerFlush(viewer));
  PetscCall(PetscViewerASCIIPopSynchronized(viewer));
  PetscFunctionReturn(0);
}

static PetscErrorCode shell_destroy(void *ctx) {
  SplShell *s = (SplShell *)ctx;
  PetscFunctionBegin;
  PetscCall(shell_release(s));
  PetscCall(VecDestroy(&s->work_rows));
  PetscCall(VecDestroy(&s->work_cols));
  PetscCall(MatDestroy(&s->A));
  PetscCall(PetscFree(s));
  PetscFunctionReturn(0);
}

PetscErrorCode spl_petsc_mat_create(Mat A, PetscInt expected_calls, Mat *S) {
  MPI_Comm comm;
  PetscBool aij, assembled, set;
  PetscInt m, n, M, N, threads;
  PetscMPIInt size;
  SplShell *s;
  PetscFunctionBegin;
  PetscCheck(A && S, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "spl_petsc_mat_create: A and S may not be NULL");
  *S = NULL;
  PetscCall(PetscObjectGetComm((PetscObject)A, &comm));
#if defined(PETSC_USE_COMPLEX) || !defined(PETSC_USE_REAL_DOUBLE)
  SETERRQ(comm, PETSC_ERR_SUP, "SPL's PETSc kernels take real double values; this PETSc's PetscScalar is not double");
#endif
  PetscCheck(8 * sizeof(PetscInt) == SPL_PETSC_INDEX_BITS, comm, PETSC_ERR_SUP,
             "SPL's PETSc kernels take %d-bit indices but this PETSc's PetscInt has %d bits (configured with "
             "--with-64-bit-indices?): the matrix is refused; use a PETSc with 32-bit indices",
             SPL_PETSC_INDEX_BITS, (int)(8 * sizeof(PetscInt)));
  MatType type;
  PetscCall(MatGetType(A, &type));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &aij, MATMPIAIJ, MATSEQAIJ, ""));
  PetscCheck(aij, comm, PETSC_ERR_SUP, "spl_petsc_mat_create takes a MATMPIAIJ or MATSEQAIJ matrix, not %s", type);
  PetscCall(MatAssembled(A, &assembled));
  PetscCheck(assembled, comm, PETSC_ERR_ARG_WRONGSTATE, "spl_petsc_mat_create needs an assembled matrix");
  /* One SPL thread per rank when several ranks share the machine, unless told otherwise
   * (-spl_num_threads, or SPL_NUM_THREADS in the environment). */
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-spl_num_threads", &threads, &set));
  if (set) spl_set_num_threads((int)threads);
  else if (size > 1 && !getenv("SPL_NUM_THREADS")) spl_set_num_threads(1);

  PetscCall(PetscNew(&s));
  PetscCall(PetscObjectReference((PetscObject)A));
  s->A = A;
  s->expected_calls = expected_calls == PETSC_DEFAULT || expected_calls == PETSC_DECIDE ? 500 : expected_calls;
  s->overlap = PETSC_TRUE;
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-spl_petsc_overlap", &s->overlap, NULL));
  PetscCall(shell_plan(s));
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCall(MatGetSize(A, &M, &N));
  PetscCall(MatCreateShell(comm, m, n, M, N, s, S));
  PetscCall(MatShellSetContextDestroy(*S, shell_destroy));
  PetscCall(MatShellSetOperation(*S, MATOP_MULT, (void (*)(void))shell_mult));
  PetscCall(MatShellSetOperation(*S, MATOP_MULT_ADD, (void (*)(void))shell_mult_add));
  PetscCall(MatShellSetOperation(*S, MATOP_MULT_TRANSPOSE, (void (*)(void))shell_mult_transpose));
  PetscCall(MatShellSetOperation(*S, MATOP_MULT_TRANSPOSE_ADD, (void (*)(void))shell_mult_transpose_add));
  PetscCall(MatShellSetOperation(*S, MATOP_GET_DIAGONAL, (void (*)(void))shell_get_diagonal));
  PetscCall(MatShellSetOperation(*S, MATOP_VIEW, (void (*)(void))shell_view));
  PetscFunctionReturn(0);
}

PetscErrorCode spl_petsc_mat_kernels(Mat S, const char **diagonal, const char **off_diagonal) {
  SplShell *s;
  PetscFunctionBegin;
  PetscCall(MatShellGetContext(S, &s));
  PetscCall(shell_current(s));
  if (diagonal) *diagonal = plan_name(s->diag.plan);
  if (off_diagonal) *off_diagonal = plan_name(s->off.plan);
  PetscFunctionReturn(0);
}
