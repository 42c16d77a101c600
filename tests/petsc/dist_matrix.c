/* dist_matrix.c: see dist_matrix.h. */
#include "dist_matrix.h"

#include <spl_matrix.h>

/* This rank's first row and row count for n rows. */
static PetscErrorCode local_rows(MPI_Comm comm, PetscInt n, DistSplit split, PetscInt *start, PetscInt *count) {
  PetscMPIInt rank, size;
  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscInt parts = size, part = rank;
  if (split == DIST_FIRST_RANK_EMPTY && size > 1) parts = size - 1, part = rank - 1;
  if (part < 0) {
    *start = 0, *count = 0;
    PetscFunctionReturn(0);
  }
  PetscInt base = n / parts, extra = n % parts;
  *count = base + (part < extra);
  *start = part * base + PetscMin(part, extra);
  PetscFunctionReturn(0);
}

/* A from this rank's rows in CSR with global columns (offs from 0). */
static PetscErrorCode from_local_csr(MPI_Comm comm, PetscInt nlocal, PetscInt N, PetscInt M, const PetscInt *offs,
                                     const PetscInt *cols, const PetscScalar *vals, Mat *A) {
  PetscFunctionBegin;
  PetscCall(MatCreate(comm, A));
  /* Square: the diagonal block is square (owned columns = owned rows). */
  PetscCall(MatSetSizes(*A, nlocal, N == M ? nlocal : PETSC_DECIDE, N, M));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSeqAIJSetPreallocationCSR(*A, offs, cols, vals));
  PetscCall(MatMPIAIJSetPreallocationCSR(*A, offs, cols, vals));
  PetscFunctionReturn(0);
}

PetscErrorCode dist_read(MPI_Comm comm, const char *path, DistSplit split, Mat *A) {
  spl_csr m;
  char err[256];
  PetscInt start, count, *offs, *cols;
  PetscFunctionBegin;
  PetscCheck(spl_read_matrix(path, &m, err, sizeof err) == 0, comm, PETSC_ERR_FILE_READ, "%s", err);
  PetscCall(local_rows(comm, (PetscInt)m.rows, split, &start, &count));
  int64_t base = m.offs[start], nnz = m.offs[start + count] - base;
  PetscCall(PetscMalloc2(count + 1, &offs, nnz, &cols));
  for (PetscInt i = 0; i <= count; ++i) offs[i] = (PetscInt)(m.offs[start + i] - base);
  for (int64_t e = 0; e < nnz; ++e) cols[e] = m.cols_idx[base + e];
  PetscCall(from_local_csr(comm, count, (PetscInt)m.rows, (PetscInt)m.cols, offs, cols, m.vals + base, A));
  PetscCall(PetscFree2(offs, cols));
  spl_csr_free(&m);
  PetscFunctionReturn(0);
}

PetscErrorCode dist_laplacian2d(MPI_Comm comm, PetscInt k, DistSplit split, Mat *A) {
  PetscInt N = k * k, start, count, *offs, *cols, e = 0;
  PetscScalar *vals;
  PetscFunctionBegin;
  PetscCall(local_rows(comm, N, split, &start, &count));
  PetscCall(PetscMalloc3(count + 1, &offs, 5 * count, &cols, 5 * count, &vals));
  offs[0] = 0;
  for (PetscInt r = start; r < start + count; ++r) {
    PetscInt gi = r / k, gj = r % k;
    /* Columns in increasing order: up, left, centre, right, down. */
    if (gi > 0) cols[e] = r - k, vals[e++] = -1.0;
    if (gj > 0) cols[e] = r - 1, vals[e++] = -1.0;
    cols[e] = r, vals[e++] = 4.0;
    if (gj < k - 1) cols[e] = r + 1, vals[e++] = -1.0;
    if (gi < k - 1) cols[e] = r + k, vals[e++] = -1.0;
    offs[r - start + 1] = e;
  }
  PetscCall(from_local_csr(comm, count, N, N, offs, cols, vals, A));
  PetscCall(PetscFree3(offs, cols, vals));
  PetscFunctionReturn(0);
}

PetscErrorCode dist_block_diagonal(MPI_Comm comm, PetscInt n, DistSplit split, Mat *A) {
  PetscInt start, count, *offs, *cols, e = 0;
  PetscScalar *vals;
  PetscFunctionBegin;
  PetscCall(local_rows(comm, n, split, &start, &count));
  PetscCall(PetscMalloc3(count + 1, &offs, 3 * count, &cols, 3 * count, &vals));
  offs[0] = 0;
  for (PetscInt r = start; r < start + count; ++r) {
    if (r > start) cols[e] = r - 1, vals[e++] = -1.0;
    cols[e] = r, vals[e++] = 2.5;
    if (r < start + count - 1) cols[e] = r + 1, vals[e++] = -1.0;
    offs[r - start + 1] = e;
  }
  PetscCall(from_local_csr(comm, count, n, n, offs, cols, vals, A));
  PetscCall(PetscFree3(offs, cols, vals));
  PetscFunctionReturn(0);
}
