/* index_refusal_test.c: spl_petsc_mat_create refuses a matrix whose PetscInt is not the width of
 * SPL's kernel indices, with a message that says so, instead of reading 64-bit indices as
 * 32-bit ones. This PETSc has 32-bit PetscInt, so the test builds spl_petsc.c as if SPL's kernels
 * took 64-bit indices (SPL_PETSC_INDEX_BITS=64, tests/petsc/CMakeLists.txt): the two disagree
 * as they would on a PETSc configured with --with-64-bit-indices. */
#include <string.h>

#include "dist_matrix.h"
#include "spl_petsc.h"

int main(int argc, char **argv) {
  Mat A, S = NULL;
  const char *text;
  char *specific = NULL;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(dist_laplacian2d(PETSC_COMM_WORLD, 8, DIST_EVEN, &A));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  PetscErrorCode err = spl_petsc_mat_create(A, 10, &S);
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscErrorMessage(err, &text, &specific));
  int ok = err == PETSC_ERR_SUP && S == NULL && specific && strstr(specific, "64-bit indices") &&
           strstr(specific, "refused");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: error %d: %s\n", ok ? "PASSED" : "FAILED", (int)err,
                        specific ? specific : "(no message)"));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return ok ? 0 : 1;
}
