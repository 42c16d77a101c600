/* SuiteSparse baselines of spl-spmv-bench (double precision; both serial):
 *   CSparse (CXSparse, int indices): cs_di_gaxpy(A, x, y) computes y += A x column by column on
 *   the CSC form of A, so y is zeroed first (inside the timed call);
 *   CHOLMOD: cholmod_sdmult(A^T, transpose = 1, ...) with A^T given as CSC, which is exactly the
 *   CSR arrays of A: a row-by-row dot product, the same access pattern as a CSR SpMV. */
#include "baselines.h"

#include <cholmod.h>
#include <cs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cholmod_common g_common;
static int g_started;

int ss_init(void) {
  if (!g_started)
    g_started = cholmod_start(&g_common);
  return g_started ? 0 : -1;
}

void ss_exit(void) {
  if (g_started)
    cholmod_finish(&g_common);
  g_started = 0;
}

const char *ss_version(void) {
  static char buf[64];
  snprintf(buf, sizeof buf, "CHOLMOD %d.%d.%d, CXSparse %d.%d.%d", CHOLMOD_MAIN_VERSION, CHOLMOD_SUB_VERSION,
           CHOLMOD_SUBSUB_VERSION, CS_VER, CS_SUBVER, CS_SUBSUB);
  return buf;
}

typedef struct {
  cs_di a;
  int64_t rows;
} csparse_mat;

void *ss_csparse_create(int64_t rows, int64_t cols, int64_t nnz, const int32_t *col_offs, const int32_t *row_idx,
                        const double *vals) {
  csparse_mat *m = (csparse_mat *)calloc(1, sizeof *m);
  if (!m)
    return NULL;
  m->a.nzmax = (int)nnz;
  m->a.m = (int)rows;
  m->a.n = (int)cols;
  m->a.p = (int *)col_offs;
  m->a.i = (int *)row_idx;
  m->a.x = (double *)vals;
  m->a.nz = -1; /* compressed column */
  m->rows = rows;
  return m;
}

void ss_csparse_spmv(void *a, const double *x, double *y) {
  csparse_mat *m = (csparse_mat *)a;
  memset(y, 0, (size_t)m->rows * sizeof(double));
  cs_di_gaxpy(&m->a, x, y);
}

void ss_csparse_destroy(void *a) { free(a); }

typedef struct {
  cholmod_sparse at;
  int64_t rows, cols;
} cholmod_mat;

void *ss_cholmod_create(int64_t rows, int64_t cols, int64_t nnz, const int32_t *offs, const int32_t *cols_idx,
                        const double *vals) {
  cholmod_mat *m = (cholmod_mat *)calloc(1, sizeof *m);
  if (!m)
    return NULL;
  m->at.nrow = (size_t)cols; /* A^T is cols x rows */
  m->at.ncol = (size_t)rows;
  m->at.nzmax = (size_t)nnz;
  m->at.p = (void *)offs;
  m->at.i = (void *)cols_idx;
  m->at.nz = NULL;
  m->at.x = (void *)vals;
  m->at.z = NULL;
  m->at.stype = 0;
  m->at.itype = CHOLMOD_INT;
  m->at.xtype = CHOLMOD_REAL;
  m->at.dtype = CHOLMOD_DOUBLE;
  m->at.sorted = 1;
  m->at.packed = 1;
  m->rows = rows;
  m->cols = cols;
  return m;
}

int ss_cholmod_spmv(void *a, const double *x, double *y) {
  cholmod_mat *m = (cholmod_mat *)a;
  cholmod_dense X, Y;
  memset(&X, 0, sizeof X);
  memset(&Y, 0, sizeof Y);
  X.nrow = X.d = X.nzmax = (size_t)m->cols;
  X.ncol = 1;
  X.x = (void *)x;
  X.xtype = CHOLMOD_REAL;
  X.dtype = CHOLMOD_DOUBLE;
  Y.nrow = Y.d = Y.nzmax = (size_t)m->rows;
  Y.ncol = 1;
  Y.x = y;
  Y.xtype = CHOLMOD_REAL;
  Y.dtype = CHOLMOD_DOUBLE;
  double alpha[2] = {1, 0}, beta[2] = {0, 0};
  return cholmod_sdmult(&m->at, 1, alpha, beta, &X, &Y, &g_common) ? 0 : -1;
}

void ss_cholmod_destroy(void *a) { free(a); }
