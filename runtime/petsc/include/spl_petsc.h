/* spl_petsc.h: PETSc matrices whose products are SPL's kernels (libsplpetsc; issue 27,
 * docs/petsc.md). Built when CMake finds PETSc (pkg-config PETSc) and MPI.
 *
 * spl_petsc_mat_create takes an assembled MATMPIAIJ (or MATSEQAIJ, what MatCreateAIJ gives on one
 * rank) and returns a MATSHELL of the same sizes and layout whose MatMult, MatMultAdd,
 * MatMultTranspose and MatMultTransposeAdd run SPL's kernels on each rank's blocks (PETSc's own
 * CSR arrays, not copied), with a plan per block and rank (docs/plans.md): MatMult starts the
 * exchange of x's ghost values, multiplies the diagonal block meanwhile, then adds the
 * off-diagonal block's non-empty rows times the ghost values. MatGetDiagonal is A's. Use the
 * shell wherever A was used (KSPSetOperators, MatMult); A must stay assembled; when A's values
 * or pattern change (its object state moves), the next product plans again.
 *
 * The kernels take 32-bit indices and f64 values: a PETSc configured with 64-bit indices or
 * complex scalars is refused with a message. Errors are PETSc's (PetscErrorCode, PetscCall). */
#ifndef SPL_PETSC_H
#define SPL_PETSC_H

#include <petscmat.h>

#ifdef __cplusplus
extern "C" {
#endif

/* S: a new MATSHELL over A (which it references until S is destroyed). expected_calls: how many
 * products the caller expects with these values (PETSC_DEFAULT: 500, a Krylov solve's worth),
 * which decides what a plan may spend on converting a block (docs/plans.md). */
PetscErrorCode spl_petsc_mat_create(Mat A, PetscInt expected_calls, Mat *S);

/* The kernels the plans of this rank chose ("csr", "sell", "dia", "bcsr"; "none" for a block
 * with no rows or no entries), for the diagonal and the off-diagonal block of the product. */
PetscErrorCode spl_petsc_mat_kernels(Mat S, const char **diagonal, const char **off_diagonal);

#ifdef __cplusplus
}
#endif

#endif /* SPL_PETSC_H */
