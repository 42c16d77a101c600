/* dist_matrix.h: PETSc AIJ matrices distributed by rows, for the tests and the benchmark of
 * SPL's PETSc matrices (tests/petsc, benchmarks/petsc). Every rank builds its own rows (a file
 * is read by every rank; a generated matrix is computed row by row), and
 * Mat{Seq,MPI}AIJSetPreallocationCSR allocates, fills and assembles them in one call: MATSEQAIJ
 * on one rank, MATMPIAIJ on more. */
#ifndef SPL_TESTS_DIST_MATRIX_H
#define SPL_TESTS_DIST_MATRIX_H

#include <petscmat.h>

/* How the rows are split: PETSc's even split, or none on rank 0 and the rest even. */
typedef enum { DIST_EVEN, DIST_FIRST_RANK_EMPTY } DistSplit;

/* A matrix file (.mtx, .rua: the splmatrix reader), symmetric files expanded. */
PetscErrorCode dist_read(MPI_Comm comm, const char *path, DistSplit split, Mat *A);
/* The 5-point Laplacian of a k x k grid (k^2 rows, SPD). */
PetscErrorCode dist_laplacian2d(MPI_Comm comm, PetscInt k, DistSplit split, Mat *A);
/* n rows, each rank's a 1D Laplacian of its own rows: no entry outside the diagonal blocks. */
PetscErrorCode dist_block_diagonal(MPI_Comm comm, PetscInt n, DistSplit split, Mat *A);

#endif
